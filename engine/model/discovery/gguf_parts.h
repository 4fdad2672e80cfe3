// Split GGUF files as llama.cpp's gguf-split names them: NAME-00001-of-00003.gguf,
// NAME-00002-of-00003.gguf, ... Part 1 carries the metadata; each part its own tensors.
// A scan shows the set once, as part 1.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kvscope {

struct GgufPartName {
  std::string stem;        // "NAME"
  std::int64_t index = 0;  // 1-based
  std::int64_t count = 0;
};

// The part a file name says it is; nullopt for a name without "-NNNNN-of-NNNNN.gguf" (or an
// index of 0, past the count, or a count of 1).
std::optional<GgufPartName> parse_gguf_part(const std::string& filename);

// Every part's path of the set `part` belongs to, in order, beside it in `dir` (whether
// they exist or not: describing the set names the missing ones).
std::vector<std::filesystem::path> gguf_part_paths(const std::filesystem::path& dir,
                                                   const GgufPartName& part);

}  // namespace kvscope
