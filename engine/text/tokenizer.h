// Text <-> token ids. Implementations: SentencePiece (a tokenizer.model file or a GGUF
// "llama" vocab), byte-level BPE (GGUF "gpt2" vocabs: SmolLM2, Qwen2, Llama 3) and the BPE
// models of a Hugging Face tokenizer.json (hf_tokenizer.h).
// User text is never parsed into special tokens; only template control text is.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace kvscope {

using TokenId = std::int32_t;

// A piece of a rendered prompt. Control text (template markup such as "<|im_start|>")
// may contain special tokens; Text (what the user typed) never becomes one.
struct PromptPart {
  enum class Kind { Control, Text };
  Kind kind = Kind::Text;
  std::string text;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Ids of plain text; `add_bos` prepends BOS when the vocab has one.
  virtual std::vector<TokenId> encode(std::string_view text, bool add_bos) const = 0;
  // Ids of a rendered prompt: Control parts may match special tokens, Text parts never do.
  virtual std::vector<TokenId> encode_parts(const std::vector<PromptPart>& parts,
                                            bool add_bos) const = 0;
  // The bytes a token stands for in generated text (may be part of a UTF-8 character;
  // feed them to Utf8StreamDecoder). Control tokens decode to "".
  virtual std::string token_bytes(TokenId id) const = 0;
  // The token's piece as stored in the vocab, for display ("▁the", "<0x0A>", "<s>").
  virtual std::string piece(TokenId id) const = 0;
  // The text of a whole sequence (e.g. a prompt): the tokens' bytes joined, without the
  // space a SentencePiece vocab adds in front of the first word; control tokens give "".
  // The default joins token_bytes.
  virtual std::string decode(const std::vector<TokenId>& ids) const;

  virtual std::int64_t vocab_size() const = 0;
  virtual TokenId bos() const = 0;  // -1 when none
  virtual TokenId eos() const = 0;  // -1 when none
  virtual TokenId eot() const = 0;  // end of turn (e.g. <|eot_id|>, <|im_end|>); -1 when none
  virtual bool add_bos_default() const = 0;  // what the model's metadata says
  virtual bool is_special(TokenId id) const = 0;
  virtual std::string kind() const = 0;  // "sentencepiece" or "bpe (PRE)"

  // True for ids that end a generation: eos, eot, and other end-of-generation tokens.
  virtual bool is_end_of_generation(TokenId id) const { return id == eos() || id == eot(); }
};

// The model's own tokenizer: embedded in the GGUF, or a HF folder's tokenizer.json (preferred,
// as transformers' fast tokenizer reads it) else its tokenizer.model, with the ids of its
// generation_config.json ending generations too. Throws ModelError (naming the file or
// metadata key) when it cannot be built.
std::unique_ptr<Tokenizer> make_tokenizer(const Model& model);

// A SentencePiece tokenizer from a tokenizer.model file (no model weights needed); `flags`
// (a HF folder's tokenizer_config.json) set whether BOS / EOS wrap a prompt.
std::unique_ptr<Tokenizer> load_sentencepiece_file(const std::string& path,
                                                   const Model::SpecialTokenFlags& flags = {});

}  // namespace kvscope
