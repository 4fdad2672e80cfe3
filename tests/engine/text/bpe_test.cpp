// Byte-level BPE: tiny "gpt2" vocabs written with GgufWriter, hand-computed merges, the
// pre-tokenizer regexes per tokenizer.ggml.pre, special-token safety and vocab validation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "support/test_data.h"
#include "text/bpe_tokenizer.h"
#include "text/byte_unicode.h"
#include "text/pretokenizer.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A vocab: the 256 byte symbols (id == byte value), then `merged` tokens, then specials.
struct TinyVocab {
  std::vector<std::string> merges = {
      "Ġ t",     // 0 -> Ġt
      "h e",     // 1 -> he
      "Ġt he",   // 2 -> Ġthe
      "l l",     // 3 -> ll
      "he ll",   // 4 -> hell
      "hell o",  // 5 -> hello
  };
  std::vector<std::string> merged = {"Ġt", "he", "Ġthe", "ll", "hell", "hello"};
  std::vector<std::pair<std::string, std::int32_t>> specials = {
      {"<|im_start|>", 3}, {"<|im_end|>", 3}, {"<tool>", 4}};
  std::string model = "gpt2";
  std::optional<std::string> pre = "gpt-2";
  std::optional<std::uint32_t> bos;
  std::optional<bool> add_bos;
  bool write_types = true;
  std::optional<std::vector<std::int32_t>> types_override;
  std::optional<int> drop_byte;  // that byte's token replaced by an unrelated one

  std::vector<std::string> tokens() const {
    std::vector<std::string> t;
    for (int b = 0; b < 256; ++b) {
      t.emplace_back(b == drop_byte ? "NOT-A-BYTE" : byte_to_unicode(static_cast<std::uint8_t>(b)));
    }
    t.insert(t.end(), merged.begin(), merged.end());
    for (const auto& s : specials) t.push_back(s.first);
    return t;
  }
  TokenId id_of(const std::string& token) const {
    const auto t = tokens();
    return static_cast<TokenId>(std::find(t.begin(), t.end(), token) - t.begin());
  }

  std::unique_ptr<Tokenizer> build() const {
    GgufWriter w;
    w.set_string("general.architecture", "llama");
    w.set_string("tokenizer.ggml.model", model);
    if (pre) w.set_string("tokenizer.ggml.pre", *pre);
    const auto toks = tokens();
    w.set_string_array("tokenizer.ggml.tokens", toks);
    if (write_types) {
      std::vector<std::int32_t> types(toks.size(), 1);
      for (std::size_t i = 0; i < specials.size(); ++i) {
        types[toks.size() - specials.size() + i] = specials[i].second;
      }
      w.set_i32_array("tokenizer.ggml.token_type", types_override.value_or(types));
    }
    w.set_string_array("tokenizer.ggml.merges", merges);
    if (bos) w.set_u32("tokenizer.ggml.bos_token_id", *bos);
    if (add_bos) w.set_bool("tokenizer.ggml.add_bos_token", *add_bos);
    const std::string path = (test::scratch_dir() / "vocab.gguf").string();
    w.write(path);
    const GgufFile gguf(path);
    return make_bpe_tokenizer(gguf);
  }
};

std::string decode(const Tokenizer& tok, const std::vector<TokenId>& ids) {
  std::string out;
  for (const TokenId id : ids) out += tok.token_bytes(id);
  return out;
}

std::vector<std::string> split(std::string_view pre, std::string_view text) {
  const Pretokenizer p(pre);
  std::vector<std::string> out;
  for (const std::string_view piece : p.split(text)) out.emplace_back(piece);
  return out;
}

TEST(BpeByteUnicodeTest, MapsSpaceNewlineAndPrintableBytesLikeGpt2) {
  EXPECT_EQ(byte_to_unicode(' '), "Ġ");
  EXPECT_EQ(byte_to_unicode('\n'), "Ċ");
  EXPECT_EQ(byte_to_unicode('a'), "a");
  EXPECT_EQ(byte_to_unicode(0xAD), "Ń");  // the last of the 68 remapped bytes: U+0143
  EXPECT_EQ(byte_to_unicode(0xFF), "ÿ");
  EXPECT_EQ(bytes_to_unicode(" the\n"), "ĠtheĊ");
}

TEST(BpeByteUnicodeTest, EveryByteRoundTripsAndForeignTextIsRejected) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  EXPECT_EQ(unicode_to_bytes(bytes_to_unicode(all)), all);
  EXPECT_EQ(unicode_to_bytes("你"), std::nullopt);        // outside the alphabet
  EXPECT_EQ(unicode_to_bytes("\xC4"), std::nullopt);      // truncated UTF-8
  EXPECT_EQ(unicode_to_bytes("\xC0\xA0"), std::nullopt);  // overlong
}

TEST(PretokenizerTest, Llama3GroupsDigitsInThreesQwen2AndSmolLmSplitEachDigit) {
  EXPECT_THAT(split("llama-bpe", "1234"), ElementsAre("123", "4"));
  EXPECT_THAT(split("llama3", "12345 x"), ElementsAre("123", "45", " x"));
  EXPECT_THAT(split("qwen2", "1234"), ElementsAre("1", "2", "3", "4"));
  EXPECT_THAT(split("smollm", "a 12"), ElementsAre("a", " ", "1", "2"));
  EXPECT_THAT(split("gpt-2", "1234 56"), ElementsAre("1234", " 56"));
}

TEST(PretokenizerTest, ContractionsAreCaseInsensitiveOnlyForLlama3AndQwen2) {
  EXPECT_THAT(split("llama-bpe", "I'M here"), ElementsAre("I", "'M", " here"));
  EXPECT_THAT(split("qwen2", "YOU'LL"), ElementsAre("YOU", "'LL"));
  EXPECT_THAT(split("gpt-2", "I'M I'm"), ElementsAre("I", "'", "M", " I", "'m"));
}

TEST(PretokenizerTest, WhitespaceRulesFollowEachFamily) {
  // A space run keeps its last space for the next word; Llama 3 keeps newlines apart.
  EXPECT_THAT(split("gpt-2", "a   b"), ElementsAre("a", "  ", " b"));
  EXPECT_THAT(split("llama-bpe", "a\n\nb"), ElementsAre("a", "\n\n", "b"));
  EXPECT_THAT(split("llama-bpe", "x.\n  y"), ElementsAre("x", ".\n", " ", " y"));
  EXPECT_THAT(split("gpt-2", "end  "), ElementsAre("end", "  "));
  EXPECT_THAT(split("gpt-2", "Hello, world!"), ElementsAre("Hello", ",", " world", "!"));
}

TEST(PretokenizerTest, UnicodeLettersStayTogetherAndPiecesCoverTheInput) {
  EXPECT_THAT(split("llama-bpe", "你好 世界"), ElementsAre("你好", " 世界"));
  EXPECT_THAT(split("qwen2", "Ünïcödé"), ElementsAre("Ünïcödé"));
  const std::string mixed = "emoji 👍🏽 and \xFF\xFE bytes \xC3( 12";
  for (const char* pre : {"gpt-2", "llama-bpe", "qwen2", "smollm"}) {
    std::string joined;
    for (const auto& piece : split(pre, mixed)) joined += piece;
    EXPECT_EQ(joined, mixed) << pre;
  }
  // Invalid bytes never match a pattern: they become pieces of their own.
  EXPECT_THAT(split("gpt-2", "a\xFFz"), ElementsAre("a", "\xFF", "z"));
}

TEST(PretokenizerTest, UnknownNamesFallBackToGpt2Rules) {
  const Pretokenizer unknown("not-a-real-pre");
  EXPECT_FALSE(unknown.known());
  EXPECT_EQ(unknown.family(), PretokenizerFamily::Gpt2);
  EXPECT_TRUE(Pretokenizer("qwen2").known());
  EXPECT_TRUE(Pretokenizer("llama-bpe").ignore_merges());
  EXPECT_FALSE(Pretokenizer("qwen2").ignore_merges());
}

TEST(BpeTokenizerTest, MergesLowestRankFirstWithinEachPreToken) {
  const TinyVocab v;
  const auto tok = v.build();
  // "hello" -> he,l,l,o -> he,ll,o -> hell,o -> hello; " the" -> Ġt,h,e -> Ġt,he -> Ġthe.
  EXPECT_THAT(tok->encode("hello the", false), ElementsAre(v.id_of("hello"), v.id_of("Ġthe")));
  // No merge "t he": rank order, not left-to-right greed, decides.
  EXPECT_THAT(tok->encode("the", false), ElementsAre('t', v.id_of("he")));
  // Equal ranks merge leftmost first.
  EXPECT_THAT(tok->encode("lll", false), ElementsAre(v.id_of("ll"), 'l'));
  // Pre-token boundaries stop merges: "hel" + "lo" never becomes "hello" across a space.
  EXPECT_THAT(tok->encode("he llo", false), ElementsAre(v.id_of("he"), ' ', v.id_of("ll"), 'o'));
  EXPECT_EQ(tok->piece(v.id_of("Ġthe")), "Ġthe");
  EXPECT_EQ(tok->token_bytes(v.id_of("Ġthe")), " the");
  EXPECT_EQ(tok->kind(), "bpe (gpt-2)");
}

TEST(BpeTokenizerTest, RoundTripsAsciiChineseEmojiAndInvalidBytes) {
  const auto tok = TinyVocab{}.build();
  for (const std::string& text :
       {std::string("Hello, the world! 1234\n\n  x"), std::string("你好，世界。"),
        std::string("👨‍👩‍👧 family 👍🏽"),
        std::string("bad \xFF\xFE bytes \xC3( end\xE2\x82"), std::string(""),
        std::string("<|im_end|>")}) {
    EXPECT_EQ(decode(*tok, tok->encode(text, false)), text);
  }
}

TEST(BpeTokenizerTest, ControlTokensNeverComeFromUserText) {
  const TinyVocab v;
  const auto tok = v.build();
  const TokenId im_start = v.id_of("<|im_start|>");
  const TokenId im_end = v.id_of("<|im_end|>");
  const TokenId tool = v.id_of("<tool>");
  for (const TokenId id : tok->encode("<|im_start|>user<|im_end|><tool>", false)) {
    EXPECT_FALSE(tok->is_special(id)) << id;
  }
  const std::vector<PromptPart> parts = {{PromptPart::Kind::Control, "<|im_start|>user\n"},
                                         {PromptPart::Kind::Text, "hi<|im_end|><tool>"},
                                         {PromptPart::Kind::Control, "<|im_end|>\n<tool>"}};
  const std::vector<TokenId> ids = tok->encode_parts(parts, false);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), im_start), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), im_end), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), tool), 1);
  EXPECT_EQ(ids.front(), im_start);
  EXPECT_EQ(ids.back(), tool);
  EXPECT_EQ(tok->token_bytes(im_end), "");      // control tokens decode to nothing
  EXPECT_EQ(tok->token_bytes(tool), "<tool>");  // user-defined tokens decode to their text
  EXPECT_EQ(decode(*tok, ids), "user\nhi<|im_end|><tool>\n<tool>");
}

TEST(BpeTokenizerTest, TextBetweenSpecialTokensIsOneRunAcrossParts) {
  const TinyVocab v;
  const auto tok = v.build();
  // " " (Control) + "the" (Text) is tokenized like " the": one pre-token, merged to Ġthe.
  const std::vector<PromptPart> parts = {{PromptPart::Kind::Control, "<|im_start|> "},
                                         {PromptPart::Kind::Text, "the"}};
  EXPECT_THAT(tok->encode_parts(parts, false),
              ElementsAre(v.id_of("<|im_start|>"), v.id_of("Ġthe")));
}

TEST(BpeTokenizerTest, AddsBosOnlyWhenAskedAndTheVocabHasOne) {
  TinyVocab v;
  EXPECT_EQ(v.build()->bos(), -1);
  EXPECT_THAT(v.build()->encode("l", true), ElementsAre('l'));
  v.bos = v.id_of("<|im_start|>");
  v.add_bos = true;
  const auto tok = v.build();
  EXPECT_TRUE(tok->add_bos_default());
  EXPECT_THAT(tok->encode("l", true), ElementsAre(*v.bos, 'l'));
  EXPECT_THAT(tok->encode("l", false), ElementsAre('l'));
}

TEST(BpeTokenizerTest, FindsEndOfTurnByTextWhenTheFileNamesNone) {
  const TinyVocab v;
  const auto tok = v.build();
  EXPECT_EQ(tok->eot(), v.id_of("<|im_end|>"));
  EXPECT_TRUE(tok->is_end_of_generation(v.id_of("<|im_end|>")));
  EXPECT_FALSE(tok->is_end_of_generation(v.id_of("<|im_start|>")));
}

TEST(BpeTokenizerTest, Llama3LooksUpWholePiecesBeforeMerging) {
  TinyVocab v;
  v.merged.push_back("Ġworld");  // reachable by no merge
  v.pre = "llama-bpe";
  const auto llama3 = v.build();
  EXPECT_THAT(llama3->encode(" world", false), ElementsAre(v.id_of("Ġworld")));
  EXPECT_EQ(llama3->kind(), "bpe (llama-bpe)");
  v.pre = "gpt-2";
  EXPECT_EQ(v.build()->encode(" world", false).size(), 6u);
}

TEST(BpeTokenizerTest, UnknownOrMissingPreFallsBackAndSaysSo) {
  TinyVocab v;
  v.pre = "mystery";
  EXPECT_EQ(v.build()->kind(), "bpe (default; unknown pre 'mystery')");
  v.pre.reset();
  EXPECT_EQ(v.build()->kind(), "bpe (default; no tokenizer.ggml.pre)");
}

TEST(BpeTokenizerTest, LongInputsMergeInNearLinearTime) {
  const TinyVocab v;
  const auto tok = v.build();
  const std::vector<TokenId> ids = tok->encode(std::string(400000, 'l'), false);
  ASSERT_EQ(ids.size(), 200000u);
  EXPECT_EQ(ids.front(), v.id_of("ll"));
  EXPECT_EQ(decode(*tok, tok->encode(std::string(300000, ' ') + "x", false)),
            std::string(300000, ' ') + "x");
}

TEST(BpeTokenizerTest, RejectsMergesNamingTokensThatDoNotExist) {
  TinyVocab v;
  v.merges.push_back("hello zz");
  try {
    v.build();
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tokenizer.ggml.merges[6]"));
    EXPECT_THAT(e.what(), HasSubstr("'zz'"));
  }
  v.merges.back() = "hellono-space";
  EXPECT_THROW(v.build(), ModelError);
  v.merges.back() = "l o";  // both exist, but "lo" does not
  EXPECT_THROW(v.build(), ModelError);
}

// A 100 KB merge, token or model name is named by a short prefix without its escape sequence.
TEST(BpeTokenizerTest, HostileTextInAnErrorIsAShortPrintablePrefix) {
  const std::string hostile = "\x1b[2J" + std::string(100000, 'a');
  std::vector<std::string> errors;
  const auto error_of = [&](const TinyVocab& v) {
    try {
      v.build();
      ADD_FAILURE() << "expected ModelError";
    } catch (const ModelError& e) {
      errors.emplace_back(e.what());
    }
  };
  TinyVocab merge;
  merge.merges.push_back(hostile);  // no space
  error_of(merge);
  merge.merges.back() = "he " + hostile;  // not in the vocab
  error_of(merge);
  TinyVocab twice;
  twice.merged.push_back(hostile);
  twice.merged.push_back(hostile);
  error_of(twice);
  TinyVocab model;
  model.model = hostile;
  error_of(model);
  for (const std::string& e : errors) {
    EXPECT_LT(e.size(), 600u) << e.substr(0, 600);
    EXPECT_EQ(e.find('\x1b'), std::string::npos);
    EXPECT_THAT(e, HasSubstr("\\x1b[2Jaaa"));
  }
}

TEST(BpeTokenizerTest, RejectsBadVocabMetadata) {
  TinyVocab v;
  v.bos = 100000;
  EXPECT_THROW(v.build(), ModelError);
  v.bos.reset();
  v.types_override = std::vector<std::int32_t>(10, 1);
  EXPECT_THROW(v.build(), ModelError);
  v.types_override = std::vector<std::int32_t>(v.tokens().size(), 9);
  EXPECT_THROW(v.build(), ModelError);
  v.types_override.reset();
  v.merged.push_back("he");  // duplicate token text
  EXPECT_THROW(v.build(), ModelError);
  v.merged.pop_back();
  v.model = "llama";
  EXPECT_THROW(v.build(), ModelError);
}

TEST(BpeTokenizerTest, EncodingAByteTheVocabLacksIsATextError) {
  TinyVocab v;
  v.drop_byte = 0x07;
  const auto tok = v.build();
  EXPECT_THAT(tok->encode("hello", false), ElementsAre(v.id_of("hello")));
  try {
    tok->encode("bell \x07", false);
    FAIL() << "expected TextError";
  } catch (const TextError& e) {
    EXPECT_THAT(e.what(), HasSubstr("byte 0x07"));
  }
}

TEST(BpeTokenizerTest, OutOfRangeIdsAreTextErrors) {
  TinyVocab v;
  v.write_types = false;
  v.merges.clear();
  v.merged.clear();
  v.specials.clear();
  const auto tok = v.build();
  EXPECT_EQ(tok->vocab_size(), 256);
  EXPECT_EQ(tok->eot(), -1);
  EXPECT_THROW(tok->piece(256), TextError);
  EXPECT_THROW(tok->token_bytes(-1), TextError);
  EXPECT_FALSE(tok->is_end_of_generation(256));
}

TEST(BpeTokenizerTest, RefusesTheRealSentencePieceModel) {
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const GgufFile gguf(path);
  EXPECT_THROW(make_bpe_tokenizer(gguf), ModelError);
}

}  // namespace
}  // namespace kvscope
