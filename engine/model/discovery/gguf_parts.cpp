#include "model/discovery/gguf_parts.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include <fmt/format.h>

namespace kvscope {

namespace {

constexpr std::string_view kSuffix = ".gguf";
constexpr std::size_t kDigits = 5;  // gguf-split writes %05d
constexpr std::string_view kOf = "-of-";

// The number in `s` when it is exactly kDigits decimal digits.
std::optional<std::int64_t> five_digits(std::string_view s) {
  if (s.size() != kDigits) return std::nullopt;
  if (!std::all_of(s.begin(), s.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return std::nullopt;
  }
  std::int64_t n = 0;
  for (char c : s) n = n * 10 + (c - '0');
  return n;
}

}  // namespace

std::optional<GgufPartName> parse_gguf_part(const std::string& filename) {
  // NAME "-" 5 digits "-of-" 5 digits ".gguf"
  constexpr std::size_t kTail = 1 + kDigits + kOf.size() + kDigits + kSuffix.size();
  std::string_view s(filename);
  if (s.size() <= kTail || !s.ends_with(kSuffix)) return std::nullopt;
  const std::string_view tail = s.substr(s.size() - kTail);
  if (tail[0] != '-' || tail.substr(1 + kDigits, kOf.size()) != kOf) return std::nullopt;
  const auto index = five_digits(tail.substr(1, kDigits));
  const auto count = five_digits(tail.substr(1 + kDigits + kOf.size(), kDigits));
  if (!index || !count || *count < 2 || *index < 1 || *index > *count) return std::nullopt;
  return GgufPartName{std::string(s.substr(0, s.size() - kTail)), *index, *count};
}

std::vector<std::filesystem::path> gguf_part_paths(const std::filesystem::path& dir,
                                                   const GgufPartName& part) {
  std::vector<std::filesystem::path> paths;
  for (std::int64_t i = 1; i <= part.count; ++i) {
    paths.push_back(dir / fmt::format("{}-{:05d}-of-{:05d}.gguf", part.stem, i, part.count));
  }
  return paths;
}

}  // namespace kvscope
