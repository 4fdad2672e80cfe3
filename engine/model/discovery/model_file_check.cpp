#include "model/discovery/model_file_check.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "model/gguf/gguf_file.h"
#include "model/safetensors_file.h"
#include "util/error.h"
#include "util/regular_file.h"

namespace kvscope {

namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The first bytes, lower-cased, with leading white space (and a UTF-8 BOM) skipped.
std::string text_start(const std::vector<char>& head) {
  std::string s(head.begin(), head.end());
  if (s.rfind("\xEF\xBB\xBF", 0) == 0) s.erase(0, 3);
  const auto first = std::find_if(
      s.begin(), s.end(), [](char c) { return !std::isspace(static_cast<unsigned char>(c)); });
  s.erase(s.begin(), first);
  std::transform(s.begin(), s.end(), s.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  return s;
}

}  // namespace

std::string model_file_problem(const std::string& path, std::string_view name) {
  const RegularFile file(path);  // a FIFO or a device is refused, never waited on
  if (!file.is_open()) return fmt::format("a file that cannot be read ({})", file.error());
  const std::uint64_t size = file.size();
  if (size == 0) return "an empty file";
  std::vector<char> head(static_cast<std::size_t>(std::min<std::uint64_t>(size, 4096)));
  head.resize(file.read_at(0, head.data(), head.size()));
  if (std::all_of(head.begin(), head.end(), [](char c) { return c == 0; })) {
    return size == head.size() ? fmt::format("{} bytes of zeros", size)
                               : fmt::format("a file of {} bytes that starts with zeros", size);
  }
  const std::string start = text_start(head);
  if (start.rfind("<!doctype html", 0) == 0 || start.rfind("<html", 0) == 0 ||
      (start.rfind('<', 0) == 0 && start.find("<html") != std::string::npos)) {
    return fmt::format("an HTML page ({} bytes)", size);
  }
  try {
    if (ends_with(name, ".gguf")) {
      GgufFile::read_header(path);
    } else if (ends_with(name, ".safetensors")) {
      SafetensorsFile::read_header(path);
    }
  } catch (const Error& e) {
    return fmt::format("not a {} file ({} bytes): {}",
                       ends_with(name, ".gguf") ? "GGUF" : "safetensors", size, e.what());
  }
  return {};
}

}  // namespace kvscope
