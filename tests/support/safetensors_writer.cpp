#include "support/safetensors_writer.h"

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace kvscope::test {

namespace {

std::uint64_t byte_size(const SafetensorsEntry& t) {
  std::int64_t n = 1;
  for (const std::int64_t d : t.shape) n *= d;
  return static_cast<std::uint64_t>(n * safetensors_dtype_size(t.dtype));
}

// {"__metadata__": {"format": "pt"}, name: {dtype, shape, data_offsets}, ...}, padded.
std::string header_text(const std::vector<SafetensorsEntry>& tensors) {
  nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    const std::uint64_t end = offset + byte_size(t);
    header[t.name] = {{"dtype", std::string(safetensors_dtype_name(t.dtype))},
                      {"shape", t.shape},
                      {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

}  // namespace

void write_safetensors(const std::filesystem::path& path,
                       const std::vector<SafetensorsEntry>& tensors) {
  const std::string header = header_text(tensors);
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) {
    out.put(static_cast<char>((static_cast<std::uint64_t>(header.size()) >> (8 * i)) & 0xff));
  }
  out << header;
  for (const auto& t : tensors) {
    const auto before = out.tellp();
    t.write_data(out);
    const auto written = static_cast<std::uint64_t>(out.tellp() - before);
    if (written != byte_size(t)) {
      throw std::runtime_error(path.string() + ": tensor " + t.name + " wrote " +
                               std::to_string(written) + " bytes, its shape needs " +
                               std::to_string(byte_size(t)));
    }
  }
  out.close();
  if (!out) throw std::runtime_error(path.string() + ": cannot write the file");
}

}  // namespace kvscope::test
