// The SentencePiece tokenizer (Llama 1/2, Mistral, Gemma, TinyLlama, ...), on
// libsentencepiece. Built from a tokenizer.model file or from a GGUF "llama" vocab turned
// into a ModelProto (sp_gguf_vocab.h).
//
// Prompts: the text between special tokens is encoded as one string, and SentencePiece
// adds its dummy prefix space to each such run, which is where llama.cpp adds it too
// (at the start of the prompt and after every special token).
//
// Special pieces (control and user-defined) come only from Control parts; plain text and
// Text parts never produce one, even a user-defined piece, which llama.cpp and the library
// itself would match anywhere in the text (sp_model_without_user_defined).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/sp_gguf_vocab.h"
#include "text/sp_model_proto.h"
#include "text/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace kvscope {

class GgufFile;

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // `serialized` is the ModelProto the library loads; `vocab` holds its fields as parsed
  // (piece types and normalizer flags, which the library API does not expose) and the
  // metadata beyond it. `source` names the file in errors. Throws ModelError.
  SentencePieceTokenizer(std::string_view serialized, SpVocab vocab, std::string source);
  ~SentencePieceTokenizer() override;

  std::vector<TokenId> encode(std::string_view text, bool add_bos) const override;
  std::vector<TokenId> encode_parts(const std::vector<PromptPart>& parts,
                                    bool add_bos) const override;
  std::string token_bytes(TokenId id) const override;
  std::string piece(TokenId id) const override;
  // Joins token_bytes and drops the dummy prefix space of the first text token.
  std::string decode(const std::vector<TokenId>& ids) const override;

  std::int64_t vocab_size() const override { return static_cast<std::int64_t>(pieces_.size()); }
  TokenId bos() const override { return bos_; }
  TokenId eos() const override { return eos_; }
  TokenId eot() const override { return eot_; }
  bool add_bos_default() const override { return add_bos_; }
  bool is_special(TokenId id) const override;
  std::string kind() const override { return "sentencepiece"; }
  bool is_end_of_generation(TokenId id) const override;

 private:
  struct Special {
    std::string text;
    TokenId id;
  };

  const SpPiece& at(TokenId id) const;
  void check_text(std::string_view text, std::string_view what) const;
  // Appends the ids of one run of plain text (the library adds the dummy prefix).
  void encode_run(std::string_view text, std::vector<TokenId>& ids) const;
  void encode_fragment(std::string_view text, std::vector<TokenId>& ids) const;
  // Splits control text on special tokens: text between them extends `run`.
  void split_control(std::string_view text, std::string& run, std::vector<TokenId>& ids) const;
  void finish(std::vector<TokenId>& ids, bool add_special) const;

  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::string source_;
  std::vector<SpPiece> pieces_;     // index = token id
  std::vector<std::string> bytes_;  // token_bytes of each id
  std::vector<Special> specials_;   // control and user-defined pieces, longest first
  // User-defined pieces of whitespace only (Gemma's "\n" and runs of spaces), longest first:
  // text is split at them before SentencePiece sees it, as llama.cpp does.
  std::vector<Special> whitespace_pieces_;
  std::vector<TokenId> end_of_generation_;
  TokenId bos_ = -1;
  TokenId eos_ = -1;
  TokenId eot_ = -1;
  bool add_bos_ = true;
  bool add_eos_ = false;
  bool add_dummy_prefix_ = true;
};

// The embedded vocab of a GGUF whose tokenizer.ggml.model is "llama".
std::unique_ptr<Tokenizer> load_sentencepiece_gguf(const GgufFile& gguf);

}  // namespace kvscope
