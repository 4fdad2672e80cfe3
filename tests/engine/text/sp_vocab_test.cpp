// The hand-written ModelProto encoder/decoder, and GGUF "llama" vocabs turned into
// SentencePiece models: what is accepted, and the errors for what is not.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_data.h"
#include "text/sentencepiece_tokenizer.h"
#include "text/sp_gguf_vocab.h"
#include "text/sp_model_proto.h"
#include "util/error.h"

namespace kvscope {
namespace {

// <unk> <s> </s>, the 256 byte pieces (ids 3..258), then a few merges; a higher score
// merges first, as in llama.cpp and SentencePiece BPE.
constexpr TokenId kFirstNormal = 259;
LlamaVocab small_vocab() {
  LlamaVocab v;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.token_types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(fmt::format("<0x{:02X}>", b));
    v.token_types.push_back(6);
  }
  for (const char* piece : {"▁", "a", "b", "▁a", "ab", "▁ab"}) {
    v.tokens.emplace_back(piece);
    v.token_types.push_back(1);
  }
  v.scores.assign(v.tokens.size(), 0.0f);
  for (std::size_t i = kFirstNormal; i < v.tokens.size(); ++i) {
    v.scores[i] = -static_cast<float>(i - kFirstNormal);
  }
  v.bos_id = 1;
  v.eos_id = 2;
  v.unk_id = 0;
  return v;
}

constexpr TokenId kSpace = kFirstNormal, kA = kFirstNormal + 1, kSpaceAb = kFirstNormal + 5;

std::unique_ptr<Tokenizer> build(const LlamaVocab& v) {
  SpVocab vocab = sp_vocab_from_llama(v, "test.gguf");
  const std::string proto = serialize_sp_model(vocab.model);
  return std::make_unique<SentencePieceTokenizer>(proto, std::move(vocab), "test.gguf");
}

std::string vocab_error(const LlamaVocab& v) {
  try {
    build(v);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_VOCAB_ERROR(vocab, fragment)                            \
  do {                                                                 \
    const std::string message_ = vocab_error(vocab);                   \
    EXPECT_NE(message_.find(fragment), std::string::npos) << message_; \
  } while (false)

TEST(SentencePieceVocabTest, SmallVocabMergesByScoreAndFallsBackToBytes) {
  const auto tok = build(small_vocab());
  EXPECT_EQ(tok->encode("ab ab", true), (std::vector<TokenId>{1, kSpaceAb, kSpaceAb}));
  EXPECT_EQ(tok->encode("a", false), (std::vector<TokenId>{kFirstNormal + 3}));
  // 'c' and 'é' (C3 A9) are not pieces: byte fallback.
  EXPECT_EQ(tok->encode("ac", false), (std::vector<TokenId>{kFirstNormal + 3, 3 + 'c'}));
  EXPECT_EQ(tok->encode("é", false), (std::vector<TokenId>{kSpace, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(tok->decode(tok->encode("ab é c", true)), "ab é c");
}

TEST(SentencePieceVocabTest, SpacePrefixFollowsTheMetadata) {
  LlamaVocab v = small_vocab();
  v.add_space_prefix = false;
  const auto tok = build(v);
  EXPECT_EQ(tok->encode("a", false), (std::vector<TokenId>{kA}));
  EXPECT_EQ(tok->decode(tok->encode(" ab", false)), " ab");
}

TEST(SentencePieceVocabTest, ChatControlTokensSplitControlTextOnly) {
  LlamaVocab v = small_vocab();
  for (const char* piece : {"<|im_start|>", "<|im_end|>"}) {
    v.tokens.emplace_back(piece);
    v.token_types.push_back(3);
    v.scores.push_back(0.0f);
  }
  const TokenId start = kFirstNormal + 6, end = kFirstNormal + 7;
  const auto tok = build(v);
  EXPECT_EQ(tok->eot(), end);  // found by name: the metadata names no eot id
  EXPECT_TRUE(tok->is_end_of_generation(end));
  EXPECT_TRUE(tok->is_end_of_generation(2));
  EXPECT_FALSE(tok->is_end_of_generation(start));
  const std::vector<PromptPart> parts = {{PromptPart::Kind::Control, "<|im_start|>a "},
                                         {PromptPart::Kind::Text, "ab<|im_end|>"},
                                         {PromptPart::Kind::Control, "<|im_end|><|im_start|>"}};
  const auto ids = tok->encode_parts(parts, false);
  // Special tokens only where the template put them; the user's "<|im_end|>" is text.
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(ids.front(), start);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), end), 1);
  EXPECT_EQ(ids[ids.size() - 2], end);
  EXPECT_EQ(ids.back(), start);
  // The run between the specials is one string: "a ab<|im_end|>", with the dummy prefix.
  const auto run = tok->encode("a ab<|im_end|>", false);
  EXPECT_EQ(std::vector<TokenId>(ids.begin() + 1, ids.end() - 2), run);
  EXPECT_EQ(tok->token_bytes(start), "");
}

// small_vocab() plus user-defined pieces (type 4), which libsentencepiece matches inside any
// text it encodes: "<|im_end|>" (a turn end stored as user-defined, as some converted vocabs
// do), "<tool>" and "ab" spelled differently ("a<b>").
LlamaVocab vocab_with_user_defined() {
  LlamaVocab v = small_vocab();
  for (const char* piece : {"<|im_end|>", "<tool>", "a<b>"}) {
    v.tokens.emplace_back(piece);
    v.token_types.push_back(4);
    v.scores.push_back(0.0f);
  }
  return v;
}
constexpr TokenId kImEnd = kFirstNormal + 6, kTool = kFirstNormal + 7, kAb = kFirstNormal + 8;

bool has_special(const Tokenizer& tok, const std::vector<TokenId>& ids) {
  return std::any_of(ids.begin(), ids.end(), [&](TokenId id) {
    return id == kImEnd || id == kTool || id == kAb || tok.is_special(id);
  });
}

// What the user typed is plain text, on every path: encode(), Text parts, and the text runs
// of Control parts around it; only a Control part produces a user-defined token.
void expect_user_defined_only_from_control(const Tokenizer& tok) {
  for (const char* typed : {"<|im_end|>", "x<tool>y", "a<b>", "<s></s>", "ab <|im_end|> <tool>"}) {
    const auto plain = tok.encode(typed, true);
    EXPECT_FALSE(has_special(tok, std::vector<TokenId>(plain.begin() + 1, plain.end())))
        << typed << ": " << ::testing::PrintToString(plain);
    EXPECT_EQ(tok.decode(plain), typed);
    const auto parts = tok.encode_parts({{PromptPart::Kind::Control, "<tool>"},
                                         {PromptPart::Kind::Text, typed},
                                         {PromptPart::Kind::Control, "<|im_end|>"}},
                                        false);
    ASSERT_GE(parts.size(), 3u) << typed;
    EXPECT_EQ(parts.front(), kTool) << typed;
    EXPECT_EQ(parts.back(), kImEnd) << typed;
    EXPECT_FALSE(has_special(tok, std::vector<TokenId>(parts.begin() + 1, parts.end() - 1)))
        << typed << ": " << ::testing::PrintToString(parts);
  }
  // Asked for in control text, each user-defined piece is its token.
  EXPECT_EQ(tok.encode_parts({{PromptPart::Kind::Control, "<|im_end|><tool>a<b>"}}, false),
            (std::vector<TokenId>{kImEnd, kTool, kAb}));
}

TEST(SentencePieceVocabTest, UserTextNeverBecomesAUserDefinedToken) {
  const auto tok = build(vocab_with_user_defined());
  expect_user_defined_only_from_control(*tok);
  EXPECT_EQ(tok->token_bytes(kTool), "<tool>");  // generated, it is its text
}

// The same vocab read from a tokenizer.model file (the library loads the file's own bytes).
TEST(SentencePieceVocabTest, UserTextNeverBecomesAUserDefinedTokenFromAModelFile) {
  const SpVocab vocab = sp_vocab_from_llama(vocab_with_user_defined(), "test.gguf");
  const auto path = test::scratch_dir() / "user_defined.model";
  {
    const std::string bytes = serialize_sp_model(vocab.model);
    std::ofstream(path, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const auto tok = load_sentencepiece_file(path.string());
  expect_user_defined_only_from_control(*tok);
}

// Gemma's vocab stores "\n", "\n\n" and runs of spaces as user-defined pieces, which llama.cpp
// and transformers give wherever the text has them (the reference prompt ids say so): such
// whitespace-only pieces are text, matched in typed text too, longest first, while a markup
// piece such as "<tool>" beside them still is not. Before, the library was handed "\n" as a
// control piece and refused any text with a line break.
TEST(SentencePieceVocabTest, WhitespaceUserDefinedPiecesAreTextMatchedAnywhere) {
  LlamaVocab v = vocab_with_user_defined();
  v.add_space_prefix = false;
  for (const char* piece : {"\n", "\n\n", "  ", "   "}) {
    v.tokens.emplace_back(piece);
    v.token_types.push_back(4);
    v.scores.push_back(0.0f);
  }
  const auto newline = static_cast<TokenId>(v.tokens.size() - 4);
  const TokenId two_newlines = newline + 1, two_spaces = newline + 2, three_spaces = newline + 3;
  const auto tok = build(v);
  const auto ids = tok->encode("a\n\n     b\na<tool>", false);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), two_newlines), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), three_spaces), 1);  // 5 spaces: 3, then 2
  EXPECT_EQ(std::count(ids.begin(), ids.end(), two_spaces), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), newline), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), kTool), 0);
  EXPECT_EQ(tok->decode(ids), "a\n\n     b\na<tool>");
}

TEST(SentencePieceVocabTest, AddEosAppendsEosWhenSpecialsAreAdded) {
  LlamaVocab v = small_vocab();
  v.add_eos = true;
  v.add_bos = false;
  const auto tok = build(v);
  EXPECT_FALSE(tok->add_bos_default());
  EXPECT_EQ(tok->encode("a", true), (std::vector<TokenId>{1, kFirstNormal + 3, 2}));
  EXPECT_EQ(tok->encode("a", false), (std::vector<TokenId>{kFirstNormal + 3}));
}

TEST(SentencePieceVocabTest, LowerCaseByteTokensAreAccepted) {
  LlamaVocab v = small_vocab();
  v.tokens[3 + 0x0A] = "<0x0a>";
  const auto tok = build(v);
  EXPECT_EQ(tok->token_bytes(3 + 0x0A), "\n");
  EXPECT_EQ(tok->encode("\n", false), (std::vector<TokenId>{kSpace, 3 + 0x0A}));
}

TEST(SentencePieceVocabTest, NoneSpecialIdsMeanAbsent) {
  LlamaVocab v = small_vocab();
  v.pad_id = 4294967295;  // how llama.cpp's converter writes "none"
  v.bos_id = -1;
  const auto tok = build(v);
  EXPECT_EQ(tok->bos(), -1);
  EXPECT_EQ(tok->encode("a", true), (std::vector<TokenId>{kFirstNormal + 3}));
}

TEST(SentencePieceVocabTest, UnknownTokenMayBeNamedByIdOnly) {
  LlamaVocab v = small_vocab();
  v.token_types[0] = 3;
  EXPECT_NO_THROW(build(v));
  v.unk_id = -1;
  EXPECT_VOCAB_ERROR(v, "no unknown token");
  v = small_vocab();
  v.token_types[1] = 2;
  EXPECT_VOCAB_ERROR(v, "tokens 0 and 1 are both of the unknown type");
}

TEST(SentencePieceVocabTest, MalformedVocabsNameTheKeyAndIndex) {
  LlamaVocab v = small_vocab();
  v.tokens[3 + 0x41] = "<0xZZ>";
  EXPECT_VOCAB_ERROR(v, "tokenizer.ggml.tokens[68] = \"<0xZZ>\" is a byte token");
  v = small_vocab();
  v.tokens[5] = "<0x4>";
  EXPECT_VOCAB_ERROR(v, "tokenizer.ggml.tokens[5]");
  v = small_vocab();
  v.scores.pop_back();
  EXPECT_VOCAB_ERROR(v, "tokenizer.ggml.scores has 264 entries, tokenizer.ggml.tokens 265");
  v = small_vocab();
  v.token_types.push_back(1);
  EXPECT_VOCAB_ERROR(v, "tokenizer.ggml.token_type has 266 entries");
  v = small_vocab();
  v.token_types[kFirstNormal] = 7;
  EXPECT_VOCAB_ERROR(v, "tokenizer.ggml.token_type[259] = 7");
  v = small_vocab();
  v.bos_id = 265;
  EXPECT_VOCAB_ERROR(v, "tokenizer.ggml.bos_token_id = 265 is out of range (vocab size 265)");
  v = small_vocab();
  v.eot_id = -5;
  EXPECT_VOCAB_ERROR(v, "tokenizer.ggml.eot_token_id = -5");
  v = small_vocab();
  v.tokens[kFirstNormal + 1] = "▁";
  EXPECT_VOCAB_ERROR(v, "tokenizer.ggml.tokens[259] and [260] are both \"▁\"");
  v = small_vocab();
  v.tokens[kFirstNormal] = "";
  EXPECT_VOCAB_ERROR(v, "tokenizer.ggml.tokens[259] is empty");
  EXPECT_VOCAB_ERROR(LlamaVocab{}, "tokenizer.ggml.tokens is empty");
}

// A 100 KB piece where a byte token belongs, or twice in the vocab, is named by a short prefix
// without its escape sequence; the whole piece used to be the message.
TEST(SentencePieceVocabTest, AHostilePieceIsQuotedShortInItsError) {
  const std::string hostile = "\x1b]0;pwned\x07" + std::string(100000, 'a');
  LlamaVocab v = small_vocab();
  v.tokens[3 + 0x41] = hostile;
  const std::string byte_error = vocab_error(v);
  v = small_vocab();
  v.tokens[kFirstNormal] = v.tokens[kFirstNormal + 1] = hostile;
  for (const std::string& e : {byte_error, vocab_error(v)}) {
    EXPECT_LT(e.size(), 600u) << e.substr(0, 600);
    EXPECT_EQ(e.find('\x1b'), std::string::npos);
    EXPECT_NE(e.find("\\x1b]0;pwned\\x07aaa"), std::string::npos) << e.substr(0, 600);
  }
}

// --- the ModelProto wire format

TEST(SentencePieceProtoTest, SerializeThenParseKeepsEveryField) {
  SpModel model;
  model.pieces = {{"<unk>", 0.0f, SpPieceType::Unknown},
                  {"▁héllo", -1.5f, SpPieceType::Normal},
                  {"<0x0A>", 0.25f, SpPieceType::Byte},
                  {"<x>", -1e30f, SpPieceType::UserDefined}};
  model.algorithm = SpModel::Algorithm::Bpe;
  model.byte_fallback = true;
  model.unk_id = 0;
  model.bos_id = -1;
  model.eos_id = 3;
  model.pad_id = -7;
  model.normalizer_name = "identity";
  model.add_dummy_prefix = false;
  model.remove_extra_whitespaces = false;
  model.escape_whitespaces = false;
  const SpModel back = parse_sp_model(serialize_sp_model(model), "roundtrip");
  ASSERT_EQ(back.pieces.size(), model.pieces.size());
  for (std::size_t i = 0; i < model.pieces.size(); ++i) {
    EXPECT_EQ(back.pieces[i].piece, model.pieces[i].piece);
    EXPECT_EQ(back.pieces[i].score, model.pieces[i].score);
    EXPECT_EQ(back.pieces[i].type, model.pieces[i].type);
  }
  EXPECT_EQ(back.algorithm, SpModel::Algorithm::Bpe);
  EXPECT_TRUE(back.byte_fallback);
  EXPECT_EQ(back.bos_id, -1);
  EXPECT_EQ(back.eos_id, 3);
  EXPECT_EQ(back.pad_id, -7);
  EXPECT_EQ(back.normalizer_name, "identity");
  EXPECT_FALSE(back.add_dummy_prefix);
  EXPECT_FALSE(back.remove_extra_whitespaces);
  EXPECT_FALSE(back.escape_whitespaces);
}

std::string read_file(const std::string& path) {
  std::string bytes(std::filesystem::file_size(path), '\0');
  std::ifstream(path, std::ios::binary)
      .read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

TEST(SentencePieceProtoTest, ReadsTheLlama2TokenizerModel) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const SpModel model = parse_sp_model(read_file(path), path);
  ASSERT_EQ(model.pieces.size(), 32000u);
  EXPECT_EQ(model.pieces[0].type, SpPieceType::Unknown);
  EXPECT_EQ(model.pieces[1].piece, "<s>");
  EXPECT_EQ(model.pieces[1].type, SpPieceType::Control);
  EXPECT_EQ(model.pieces[3].piece, "<0x00>");
  EXPECT_EQ(model.pieces[258].type, SpPieceType::Byte);
  EXPECT_EQ(model.pieces[15043].piece, "▁Hello");
  EXPECT_EQ(model.algorithm, SpModel::Algorithm::Bpe);
  EXPECT_TRUE(model.byte_fallback);
  EXPECT_EQ(model.bos_id, 1);
  EXPECT_EQ(model.eos_id, 2);
  EXPECT_TRUE(model.add_dummy_prefix);
  EXPECT_FALSE(model.remove_extra_whitespaces);
}

TEST(SentencePieceProtoTest, ReserializedLlama2ModelTokenizesTheSame) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  SpVocab vocab;
  vocab.model = parse_sp_model(read_file(path), path);
  const std::string proto = serialize_sp_model(vocab.model);
  const SentencePieceTokenizer tok(proto, std::move(vocab), "reserialized");
  // spm_encode --model=llama2-tokenizer.model --output_format=id
  EXPECT_EQ(tok.encode("Hello world! How are you today?", false),
            (std::vector<TokenId>{15043, 3186, 29991, 1128, 526, 366, 9826, 29973}));
  EXPECT_EQ(tok.encode("multiple   spaces   here", false),
            (std::vector<TokenId>{2999, 259, 8162, 259, 1244}));
  EXPECT_EQ(tok.encode("你好，世界！今天天气很好。", false),
            (std::vector<TokenId>{29871, 30919, 31076, 30214, 30793, 30967, 30584, 31482, 30408,
                                  30408, 233, 179, 151, 232, 193, 139, 31076, 30267}));
}

std::string proto_error(const std::string& bytes) {
  try {
    parse_sp_model(bytes, "bad.model");
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SentencePieceProtoTest, MalformedWireDataNamesTheProblemAndOffset) {
  using namespace std::string_literals;
  // Field 1 (pieces), length 5, but only 2 bytes follow.
  EXPECT_NE(proto_error("\x0A\x05\x0A\x00"s).find("field 1 claims 5 bytes, only 2 left"),
            std::string::npos);
  EXPECT_NE(proto_error("\x08\xFF"s).find("truncated varint (at byte 2)"), std::string::npos);
  EXPECT_NE(proto_error("\x08\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x01"s).find("longer than 10"),
            std::string::npos);
  EXPECT_NE(proto_error("\x0B"s).find("unsupported wire type 3"), std::string::npos);
  EXPECT_NE(proto_error("\x00"s).find("invalid field number"), std::string::npos);
  EXPECT_NE(proto_error("\x15\x01\x02"s).find("truncated fixed-size field"), std::string::npos);
  // A piece (field 1) whose type (field 3) is 9.
  EXPECT_NE(proto_error("\x0A\x02\x18\x09"s).find("piece 0: unknown type 9 (at byte 2)"),
            std::string::npos);
  // A piece whose piece string (field 1) is sent as a varint.
  EXPECT_NE(proto_error("\x0A\x02\x08\x01"s).find("wire type 0, expected 2"), std::string::npos);
  // trainer_spec.unk_id (field 40) = 2^40: not an int32.
  EXPECT_NE(proto_error("\x12\x08\xC0\x02\x80\x80\x80\x80\x80\x20"s).find("is not an int32"),
            std::string::npos);
  EXPECT_NE(proto_error("\x12\x03\x18\x07\x00"s).find("unknown model_type 7"), std::string::npos);
}

}  // namespace
}  // namespace kvscope
