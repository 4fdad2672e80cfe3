// Splits text into the pieces byte-level BPE merges within ("pre-tokens"), with the regexes
// llama.cpp uses for each tokenizer.ggml.pre value. Each pattern of a family is applied in
// turn to the pieces of the previous one; text a pattern does not match (between matches)
// stays a piece of its own, as in llama.cpp's unicode_regex_split. PCRE2 in UTF + UCP mode,
// JIT-compiled when available; invalid UTF-8 never matches, so stray bytes become pieces.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope {

// The split rules a pre-tokenizer name selects.
enum class PretokenizerFamily {
  Gpt2,    // 's|'t|... ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  Llama3,  // case-insensitive contractions, \p{N}{1,3}, newlines kept apart
  Qwen2,   // Llama 3's rules with single digits
  Digits,  // every digit alone, then GPT-2 (SmolLM, StarCoder, Command-R)
};

std::string_view pretokenizer_family_name(PretokenizerFamily family);

class Pretokenizer {
 public:
  // `pre` is tokenizer.ggml.pre ("" when the key is absent). Unknown names fall back to
  // GPT-2's rules; known() then says false.
  explicit Pretokenizer(std::string_view pre);
  ~Pretokenizer();
  Pretokenizer(Pretokenizer&&) noexcept;
  Pretokenizer& operator=(Pretokenizer&&) noexcept;

  // The pieces of `text`, in order; they concatenate back to `text` exactly.
  // Throws TextError if the regex engine fails (never for any input we know of).
  std::vector<std::string_view> split(std::string_view text) const;

  const std::string& pre() const { return pre_; }
  PretokenizerFamily family() const { return family_; }
  bool known() const { return known_; }
  // Llama 3 vocabs look a whole piece up before merging (HF "ignore_merges").
  bool ignore_merges() const { return ignore_merges_; }
  // BOS default when tokenizer.ggml.add_bos_token is absent (llama.cpp's rule).
  bool add_bos_default() const { return add_bos_default_; }

 private:
  struct Patterns;
  std::string pre_;
  PretokenizerFamily family_ = PretokenizerFamily::Gpt2;
  bool known_ = false;
  bool ignore_merges_ = false;
  bool add_bos_default_ = false;
  std::unique_ptr<Patterns> patterns_;
};

}  // namespace kvscope
