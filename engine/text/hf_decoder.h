// tokenizer.json "decoder": how token pieces become text. Steps before a Fuse act on each
// token (so token_bytes can stream them); steps after it act on the joined text (Llama 2's
// Strip of the first space). Supported: ByteLevel, Replace (String pattern), ByteFallback,
// Fuse, Strip, Metaspace and Sequence. Internal to engine/text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvscope {

class HfDecoder {
 public:
  // `config` is the "decoder" value (null: pieces are the text). Throws ModelError
  // naming `source` and the component.
  HfDecoder(const nlohmann::json& config, const std::string& source);

  // The bytes of one token's piece (per-token steps only); `first`: the first token of a
  // decoded sequence (Metaspace drops its "▁" there).
  std::string token_bytes(std::string_view piece, bool first = false) const;
  // True when the first token of a sequence decodes differently from the others.
  bool first_token_differs() const { return first_differs_; }
  // ByteLevel: the library turns the joined bytes into a String lossily (U+FFFD for each
  // maximal invalid subpart), so a whole decode is made valid UTF-8.
  bool byte_level() const { return has(Kind::ByteLevel); }
  // ByteFallback: the byte of a "<0xXX>" piece, -1 for other pieces or without the step.
  // The library decodes a run of byte pieces together: valid UTF-8, or one U+FFFD per byte.
  int byte_fallback_value(std::string_view piece) const;
  // The joined token bytes of a whole sequence with the whole-text steps applied.
  std::string finish(std::string text) const;

 private:
  enum class Kind { ByteLevel, Replace, ByteFallback, Strip, Metaspace };
  struct Step {
    Kind kind;
    std::string pattern;    // Replace; Strip: the character
    std::string content;    // Replace
    int start = 0;          // Strip: at most this many leading characters
    int stop = 0;           // Strip: at most this many trailing characters
    bool prepend = false;   // Metaspace: a "▁" was prepended to the first word
    std::string name = {};  // for errors: "tokenizer.json: decoder Sequence Replace"
  };
  void add(const nlohmann::json& config, const std::string& where, int depth);
  static std::string run(const Step& step, std::string text, bool first);
  bool has(Kind kind) const;

  std::vector<Step> per_token_;
  std::vector<Step> whole_text_;
  bool fused_ = false;  // a Fuse was seen: later steps go to whole_text_
  bool first_differs_ = false;
};

}  // namespace kvscope
