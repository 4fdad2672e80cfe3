// The SentencePiece tokenizer against its references: the Llama 2 tokenizer.model and
// libsentencepiece's own spm_encode, and the embedded vocab of stories260K.gguf and the
// prompt ids llama.cpp produced for it.
#include "text/sentencepiece_tokenizer.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/gguf/gguf_file.h"
#include "model/model.h"
#include "support/test_data.h"
#include "text/utf8_stream.h"
#include "util/error.h"

namespace kvscope {
namespace {

struct Case {
  std::string text;
  std::vector<TokenId> ids;
};

// Expected ids for /work/shared/models/llama2-tokenizer.model (SentencePiece 0.1.97).
// Single-line cases: `spm_encode --model=llama2-tokenizer.model --output_format=id`, one
// line of input per case. Cases with '\n' or '\t' (spm_encode reads lines, so it cannot be
// given them): SentencePieceProcessor::Load(...) + Encode(text, &ids) in a scratch program,
// which gives spm_encode's ids on every single-line case above.
const std::vector<Case>& llama2_cases() {
  static const std::vector<Case> cases = {
      {"Hello world! How are you today?", {15043, 3186, 29991, 1128, 526, 366, 9826, 29973}},
      {"你好，世界！今天天气很好。",
       {29871, 30919, 31076, 30214, 30793, 30967, 30584, 31482, 30408, 30408, 233, 179, 151, 232,
        193, 139, 31076, 30267}},
      {"こんにちは、世界。カタカナと漢字も。",
       {29871, 30589, 30389, 30353, 30644, 30449, 30330, 30793, 30967, 30267, 30439, 30369, 30439,
        30576, 30364, 31652, 30578, 30723, 30267}},
      {"Family: 👨‍👩‍👧‍👦 and 🏳️‍🌈 flag, thumbs 👍🏽",
       {14662, 29901, 29871, 243, 162,   148,   171, 30722, 243, 162, 148,  172,
        30722, 243,   162,   148, 170,   30722, 243, 162,   148, 169, 322,  29871,
        243,   162,   146,   182, 30598, 30722, 243, 162,   143, 139, 7353, 29892,
        28968, 29879, 29871, 243, 162,   148,   144, 243,   162, 146, 192}},
      {"English, 中文, 日本語, Русский, العربية and emoji 😀",
       {4223,  29892, 29871, 30275, 30333, 29892, 29871, 30325, 30346, 30968,
        29892, 29006, 2542,  29892, 24508, 30218, 30156, 30177, 30163, 30242,
        322,   953,   29877, 2397,  29871, 243,   162,   155,   131}},
      {"  leading and trailing  ", {259, 8236, 322, 25053, 259}},
      {"multiple   spaces   here", {2999, 259, 8162, 259, 1244}},
      {"line one\nline two\n\nline four\n", {1196, 697, 13, 1220, 1023, 13, 13, 1220, 3023, 13}},
      {"\ttab\tseparated\n  indented\n",
       {29871, 12, 3891, 12, 25048, 630, 13, 29871, 1399, 14927, 13}},
  };
  return cases;
}

std::unique_ptr<Tokenizer> llama2(const std::string& path) {
  return load_sentencepiece_file(path);
}

std::unique_ptr<Tokenizer> stories(const std::string& path) {
  const GgufFile gguf(path);
  return load_sentencepiece_gguf(gguf);
}

PromptPart control(std::string text) {
  return {PromptPart::Kind::Control, std::move(text)};
}
PromptPart user(std::string text) {
  return {PromptPart::Kind::Text, std::move(text)};
}

TEST(SentencePieceFileTest, EncodesExactlyLikeSpmEncode) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const auto tok = llama2(path);
  for (const Case& c : llama2_cases()) {
    EXPECT_EQ(tok->encode(c.text, false), c.ids) << c.text;
    std::vector<TokenId> with_bos = {1};
    with_bos.insert(with_bos.end(), c.ids.begin(), c.ids.end());
    EXPECT_EQ(tok->encode(c.text, true), with_bos) << c.text;
  }
}

TEST(SentencePieceFileTest, DecodeOfEncodeGivesTheTextBack) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const auto tok = llama2(path);
  for (const Case& c : llama2_cases()) {
    EXPECT_EQ(tok->decode(tok->encode(c.text, true)), c.text);
  }
}

TEST(SentencePieceFileTest, StreamedTokenBytesRebuildSplitCharacters) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const auto tok = llama2(path);
  // The emoji case spells most emoji as byte-fallback pieces, one byte per token.
  const Case& c = llama2_cases()[3];
  Utf8StreamDecoder decoder;
  std::string streamed;
  for (const TokenId id : c.ids) {
    const std::string chunk = decoder.push(tok->token_bytes(id));
    EXPECT_FALSE(find_invalid_utf8(chunk).has_value());
    streamed += chunk;
  }
  streamed += decoder.flush();
  // Raw token bytes keep the dummy prefix space ("▁Family"); decode() drops it.
  EXPECT_EQ(streamed, " " + c.text);
}

TEST(SentencePieceFileTest, ReportsVocabAndPieces) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const auto tok = llama2(path);
  EXPECT_EQ(tok->vocab_size(), 32000);
  EXPECT_EQ(tok->bos(), 1);
  EXPECT_EQ(tok->eos(), 2);
  EXPECT_EQ(tok->eot(), -1);
  EXPECT_TRUE(tok->add_bos_default());
  EXPECT_EQ(tok->kind(), "sentencepiece");
  EXPECT_EQ(tok->piece(1), "<s>");
  EXPECT_EQ(tok->piece(15043), "▁Hello");
  EXPECT_EQ(tok->piece(13), "<0x0A>");
  EXPECT_EQ(tok->token_bytes(15043), " Hello");
  EXPECT_EQ(tok->token_bytes(13), "\n");
  EXPECT_EQ(tok->token_bytes(243), "\xF0");
  EXPECT_EQ(tok->token_bytes(1), "");
  EXPECT_EQ(tok->token_bytes(2), "");
  EXPECT_TRUE(tok->is_special(1));
  EXPECT_TRUE(tok->is_special(2));
  EXPECT_FALSE(tok->is_special(15043));
  EXPECT_FALSE(tok->is_special(13));
  EXPECT_TRUE(tok->is_end_of_generation(2));
  EXPECT_FALSE(tok->is_end_of_generation(1));
}

TEST(SentencePieceFileTest, ControlTokenTextTypedByTheUserStaysPlainText) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const auto tok = llama2(path);
  // spm_encode: "</s>" -> 1533 29879 29958 ("▁</" "s" ">"), "<s>" -> 529 29879 29958.
  EXPECT_EQ(tok->encode("</s>", false), (std::vector<TokenId>{1533, 29879, 29958}));
  EXPECT_EQ(tok->encode_parts({user("</s>")}, false), (std::vector<TokenId>{1533, 29879, 29958}));
  EXPECT_EQ(tok->encode_parts({user("<s>")}, true), (std::vector<TokenId>{1, 529, 29879, 29958}));
}

TEST(SentencePieceFileTest, ControlPartsSplitOnSpecialTokensAndTextRunsJoin) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const auto tok = llama2(path);
  // Llama 2 chat, two turns. The runs between special tokens are "[INST] hi [/INST]" and
  // "[INST] "; spm_encode gives 518 25580 29962 7251 518 29914 25580 29962 and
  // 518 25580 29962 29871 for them (each with the dummy prefix, as llama.cpp adds a space
  // after every special token).
  const std::vector<PromptPart> parts = {control("[INST] "), user("hi"), control(" [/INST]"),
                                         control("</s><s>[INST] ")};
  const std::vector<TokenId> expected = {1,     518, 25580, 29962, 7251,  518,   29914, 25580,
                                         29962, 2,   1,     518,   25580, 29962, 29871};
  EXPECT_EQ(tok->encode_parts(parts, true), expected);
  // The same text as one Text part has no special tokens at all.
  const auto plain = tok->encode_parts({user("[INST] hi [/INST]</s><s>[INST] ")}, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1) + std::count(plain.begin(), plain.end(), 2),
            0);
}

TEST(SentencePieceFileTest, EmptyAndVeryLongPrompts) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const auto tok = llama2(path);
  EXPECT_EQ(tok->encode("", true), std::vector<TokenId>{1});
  EXPECT_TRUE(tok->encode("", false).empty());
  EXPECT_EQ(tok->encode_parts({}, true), std::vector<TokenId>{1});
  std::string text;
  while (text.size() < (1u << 20)) text += "The cat sat on the mat, 猫がいた. ";
  const auto ids = tok->encode(text, false);
  EXPECT_GT(ids.size(), text.size() / 8);
  EXPECT_EQ(tok->decode(ids), text);
}

TEST(SentencePieceFileTest, RejectsInvalidUtf8AndOutOfRangeIds) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const auto tok = llama2(path);
  EXPECT_THROW(tok->encode("ok \xC3", false), TextError);
  EXPECT_THROW(tok->encode_parts({user("a"), control("\xFF")}, false), TextError);
  EXPECT_THROW(tok->token_bytes(-1), TextError);
  EXPECT_THROW(tok->token_bytes(32000), TextError);
  EXPECT_THROW(tok->piece(32000), TextError);
  EXPECT_THROW(tok->decode({1, 32000}), TextError);
}

// --- bad tokenizer.model files

std::string write_file(const std::string& name, const std::string& bytes) {
  const auto path = (test::scratch_dir() / name).string();
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::string read_file(const std::string& path) {
  std::string bytes(std::filesystem::file_size(path), '\0');
  std::ifstream(path, std::ios::binary)
      .read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

void expect_model_error(const std::string& path, const std::string& fragment) {
  try {
    llama2(path);
    ADD_FAILURE() << path << " loaded";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(SentencePieceFileTest, MissingEmptyTruncatedAndRandomFilesGiveModelError) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const std::string good = read_file(path);
  expect_model_error((test::scratch_dir() / "absent.model").string(), "no such");
  expect_model_error(write_file("empty.model", ""), "empty");
  expect_model_error(write_file("truncated.model", good.substr(0, good.size() / 2)), "");
  expect_model_error(write_file("text.model", "this is not a protobuf\n"), "");
  std::mt19937 rng(7);
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  expect_model_error(write_file("noise.model", noise), "");
}

TEST(SentencePieceFileTest, OversizedFileIsRejectedBeforeReading) {
  const auto path = (test::scratch_dir() / "huge.model").string();
  std::ofstream(path).put('x');
  std::filesystem::resize_file(path, std::uintmax_t{1} << 30);  // sparse: no disk used
  expect_model_error(path, "too large");
  std::filesystem::remove(path);
}

TEST(SentencePieceFileTest, CorruptedModelBytesLoadOrFailCleanly) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const std::string good = read_file(path);
  std::mt19937 rng(99);
  for (int trial = 0; trial < 100; ++trial) {
    std::string bad = good;
    for (int k = 0; k < 8; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    if (trial % 4 == 0) bad.resize(rng() % bad.size());
    const auto file = write_file("corrupt.model", bad);
    try {
      const auto tok = llama2(file);
      // A corruption the format cannot see (a piece's letters, a score) still gives a
      // working tokenizer.
      (void)tok->encode("Hello world", true);
    } catch (const ModelError&) {
    } catch (const TextError&) {
    }
  }
}

// --- the GGUF-embedded vocab of stories260K, against llama.cpp

TEST(SentencePieceGgufTest, PromptIdsMatchLlamaCpp) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/stories260K-greedy.json");
  const auto tok = stories(model);
  const auto json = nlohmann::json::parse(std::ifstream(reference));
  ASSERT_FALSE(json.at("cases").empty());
  for (const auto& c : json.at("cases")) {
    const auto prompt = c.at("prompt").get<std::string>();
    EXPECT_EQ(tok->encode(prompt, true), c.at("prompt_ids").get<std::vector<TokenId>>()) << prompt;
    EXPECT_EQ(tok->encode_parts({user(prompt)}, true),
              c.at("prompt_ids").get<std::vector<TokenId>>());
  }
}

TEST(SentencePieceGgufTest, GeneratedTokenBytesSpellLlamaCppText) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/stories260K-greedy.json");
  const auto tok = stories(model);
  const auto json = nlohmann::json::parse(std::ifstream(reference));
  for (const auto& c : json.at("cases")) {
    Utf8StreamDecoder decoder;
    std::string text;
    for (const TokenId id : c.at("greedy_ids").get<std::vector<TokenId>>()) {
      text += decoder.push(tok->token_bytes(id));
    }
    text += decoder.flush();
    EXPECT_EQ(text, c.at("greedy_text").get<std::string>());
  }
}

TEST(SentencePieceGgufTest, ReportsTheMetadataSpecialTokens) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const auto tok = stories(model);
  EXPECT_EQ(tok->vocab_size(), 512);
  EXPECT_EQ(tok->bos(), 1);
  EXPECT_EQ(tok->eos(), 2);
  EXPECT_EQ(tok->eot(), -1);
  EXPECT_TRUE(tok->add_bos_default());
  EXPECT_EQ(tok->piece(0), "<unk>");
  EXPECT_EQ(tok->token_bytes(13), "\n");  // <0x0A>
  EXPECT_EQ(tok->token_bytes(2), "");
  // In control text "</s>" is the eos token; typed by the user it is four characters.
  EXPECT_EQ(tok->encode_parts({control("</s>")}, false), std::vector<TokenId>{2});
  const auto typed = tok->encode_parts({user("</s>")}, false);
  EXPECT_EQ(std::count(typed.begin(), typed.end(), 2), 0);
  EXPECT_EQ(tok->decode(typed), "</s>");
}

}  // namespace
}  // namespace kvscope
