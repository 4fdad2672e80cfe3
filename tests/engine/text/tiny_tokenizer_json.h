// A small byte-level tokenizer.json for tests: the 256 byte pieces (id = byte value), the
// merges a+b ("a b" string form) and ab+c (["ab", "c"] pair form), and <s> (258) / </s>
// (259) as special added tokens; the template puts <s> before a prompt.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/test_data.h"
#include "text/byte_unicode.h"

namespace kvscope::test {

inline void write_json(const std::filesystem::path& path, const nlohmann::json& j) {
  std::ofstream(path) << j.dump();
}

inline nlohmann::json tiny_file() {
  using nlohmann::json;
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) {
    vocab[std::string(byte_to_unicode(static_cast<std::uint8_t>(b)))] = b;
  }
  vocab["ab"] = 256;
  vocab["abc"] = 257;
  vocab["<s>"] = 258;
  vocab["</s>"] = 259;
  const json bos_template = {
      {"type", "TemplateProcessing"},
      {"single",
       {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
        {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
      {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {258}}, {"tokens", {"<s>"}}}}}}};
  return {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"a b", {"ab", "c"}}}}},
          {"added_tokens",
           {{{"id", 258}, {"content", "<s>"}, {"special", true}},
            {{"id", 259}, {"content", "</s>"}, {"special", true}}}},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
          {"post_processor", bos_template},
          {"decoder", {{"type", "ByteLevel"}}}};
}

// Writes `file` as tokenizer.json in a fresh scratch folder; returns its path.
inline std::string write_file(const nlohmann::json& file) {
  const auto path = scratch_dir() / "tokenizer.json";
  write_json(path, file);
  return path.string();
}

}  // namespace kvscope::test
