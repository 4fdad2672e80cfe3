// The few fields of SentencePiece's ModelProto that KVScope reads and writes, with a
// hand-written protobuf wire-format encoder and decoder (libsentencepiece-dev ships no
// generated header for ModelProto). Field numbers are those of sentencepiece_model.proto:
//   ModelProto     { pieces = 1; trainer_spec = 2; normalizer_spec = 3 }
//   SentencePiece  { piece = 1; score = 2 (float); type = 3 }
//   TrainerSpec    { model_type = 3; vocab_size = 4; byte_fallback = 35;
//                    unk_id = 40; bos_id = 41; eos_id = 42; pad_id = 43 }
//   NormalizerSpec { name = 1; add_dummy_prefix = 3; remove_extra_whitespaces = 4;
//                    escape_whitespaces = 5 }
// The decoder reads a tokenizer.model only for what the SentencePiece API does not
// expose (piece types, the normalizer flags); the library itself loads the original bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope {

// Piece types: the numbers of ModelProto.SentencePiece.Type, which GGUF's
// tokenizer.ggml.token_type uses too.
enum class SpPieceType : std::int32_t {
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

struct SpPiece {
  std::string piece;
  float score = 0.0f;
  SpPieceType type = SpPieceType::Normal;
};

// The defaults are sentencepiece_model.proto's.
struct SpModel {
  enum class Algorithm : std::int32_t { Unigram = 1, Bpe = 2, Word = 3, Char = 4 };

  std::vector<SpPiece> pieces;  // index = token id
  // TrainerSpec
  Algorithm algorithm = Algorithm::Unigram;
  bool byte_fallback = false;
  std::int32_t unk_id = 0;
  std::int32_t bos_id = 1;
  std::int32_t eos_id = 2;
  std::int32_t pad_id = -1;
  // NormalizerSpec
  std::string normalizer_name;
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

// The byte a "<0xZZ>" piece stands for (hex digits in either case), or -1 when the
// piece is not of that form.
int sp_byte_piece_value(std::string_view piece);

// Whether a piece is spaces, tabs and line breaks only (Gemma's "\n\n", its runs of
// spaces): text that cannot stand for anything but itself, so the tokenizer splits user
// text at such user-defined pieces (sentencepiece_tokenizer.h) as llama.cpp does.
bool sp_whitespace_piece(std::string_view piece);

// A serialized ModelProto holding exactly the fields above (vocab_size = pieces.size()).
std::string serialize_sp_model(const SpModel& model);

// `bytes` (a serialized ModelProto) with every user-defined piece made a control piece, in
// place; all other bytes are kept. libsentencepiece matches user-defined pieces inside any
// text it encodes (so typing "<|im_end|>" would give that token); loaded from this copy, it
// never produces them, and the tokenizer adds them only where control text names them (or,
// for whitespace pieces, where the text has them: it splits them out before the library
// sees the text).
// Throws ModelError as parse_sp_model.
std::string sp_model_without_user_defined(std::string_view bytes, const std::string& source);

// Reads the fields above from a serialized ModelProto, skipping all others. Every read
// is bounds-checked; malformed input throws ModelError naming `source` and the offset.
SpModel parse_sp_model(std::string_view bytes, const std::string& source);

}  // namespace kvscope
