// A GGUF "llama" vocab (tokenizer.ggml.model == "llama") turned into a SentencePiece
// ModelProto. llama.cpp tokenizes such vocabs by merging the best-scoring pair of
// adjacent pieces, falling back to <0xZZ> byte pieces: SentencePiece's BPE algorithm.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/sp_model_proto.h"
#include "text/tokenizer.h"

namespace kvscope {

class GgufFile;

// The vocab metadata as stored (tokenizer.ggml.*); ids are -1 when absent.
struct LlamaVocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<std::int64_t> token_types;
  std::int64_t bos_id = -1;
  std::int64_t eos_id = -1;
  std::int64_t unk_id = -1;
  std::int64_t pad_id = -1;
  std::int64_t eot_id = -1;
  bool add_bos = true;
  bool add_eos = false;
  bool add_space_prefix = true;
  bool remove_extra_whitespaces = false;
};

// Everything a SentencePieceTokenizer needs: the ModelProto's fields and what the
// model's metadata adds (end of turn, whether prompts start with BOS or end with EOS).
struct SpVocab {
  SpModel model;
  TokenId eot = -1;
  bool add_bos = true;
  bool add_eos = false;
};

// Reads the tokenizer.ggml.* keys; throws ModelError naming a missing or mistyped key.
LlamaVocab read_llama_vocab(const GgufFile& gguf);

// Validates `vocab` (equal array lengths, known token types, special ids in range,
// well-formed byte pieces, one unknown piece, no empty or duplicate pieces) and builds
// the model; byte pieces are spelled "<0xZZ>" in upper case, as the library looks them up. Throws
// ModelError naming `source`, the key and the token index at fault.
SpVocab sp_vocab_from_llama(const LlamaVocab& vocab, const std::string& source);

}  // namespace kvscope
