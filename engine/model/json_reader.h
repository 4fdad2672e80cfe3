// Reading JSON that came from disk (config.json, the shard index, tokenizer_config.json,
// safetensors headers, the preset catalogues) at a bounded cost. nlohmann builds a DOM node
// of 16 to ~100 bytes for every value, so a small hostile file could exhaust memory (48 MB
// of '[' took 3.9 GB), and it recurses to print one (dump() of an array nested 100,000 deep
// overflowed the stack). So: the size is checked before anything is read, the parse stops
// at the first container nested too deep or the first value past the budget, and error
// messages describe a value one level deep or quote a bounded prefix, never dump it.
// Every JSON parse of file contents in the engine goes through parse_json.
// Exposes nlohmann::json: for the engine libraries that link it (model, plan).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvscope {

struct JsonLimits {
  std::uint64_t max_bytes = 0;  // of the text; checked before a file is read
  // Arrays and objects inside one another; real model files use 3 or 4 levels.
  int max_depth = 64;
  // Values and keys; each costs ~16-100 bytes of DOM, so this bounds a parse to ~200 MB.
  // Real files hold far fewer (a safetensors header: ~10 per tensor).
  std::uint64_t max_values = std::uint64_t{1} << 21;
};

// Called with each key of the top-level object in file order, duplicates included
// (nlohmann keeps only the last of a duplicated key).
using JsonTopLevelKeyHook = std::function<void(const std::string& key)>;

// The document in `text` (of any JSON type). ModelError "SOURCE: ..." when the text is
// over the limits or not JSON.
nlohmann::json parse_json(std::string_view text, const std::string& source,
                          const JsonLimits& limits, const JsonTopLevelKeyHook& on_key = {});

// Reads at most limits.max_bytes of the file at `path` (larger files are refused before
// reading) and parses it; ModelError naming the file otherwise.
nlohmann::json read_json_file(const std::string& path, const JsonLimits& limits);

// Untrusted text for an error message: printable ASCII kept, other bytes as \xNN, cut after
// `max` bytes with a note of the full length.
std::string quote_prefix(std::string_view text, std::size_t max = 64);

// A value for an error message, one level deep: "number 3.5", "string \"F3\"",
// "array of 2 elements", "object of 1 member".
std::string describe_json(const nlohmann::json& value);

}  // namespace kvscope
