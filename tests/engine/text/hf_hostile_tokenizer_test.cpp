// A hostile tokenizer.json (issue #38, item 3) costs bounded time and memory: a slow Split
// regex runs out of the request's regex budget, steps that multiply the text stop at their
// bound, text a step would insert is capped when the file loads, and vocabularies or merge
// lists past what any published tokenizer holds are refused, each error naming the field or
// the step. Work is bounded by counts and limits, never measured in time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/text/tiny_tokenizer_json.h"
#include "text/hf_tokenizer.h"
#include "util/error.h"

namespace kvscope {
namespace {

using nlohmann::json;
using test::tiny_file;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::unique_ptr<Tokenizer> parse(const json& file) {
  return parse_hf_tokenizer(file.dump(), "tokenizer.json");
}

std::string load_error(const json& file) {
  try {
    parse(file);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "no error";
}

std::string encode_error(const json& file, const std::string& text) {
  const auto tok = parse(file);
  try {
    tok->encode(text, false);
  } catch (const TextError& e) {
    return e.what();
  }
  return "no error";
}

json split_file(const std::string& regex) {
  json f = tiny_file();
  f["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"},
         {"pattern", {{"Regex", regex}}},
         {"behavior", "Isolated"},
         {"invert", false}},
        {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  return f;
}

json replace(const std::string& pattern, const std::string& content) {
  return {{"type", "Replace"}, {"pattern", {{"String", pattern}}}, {"content", content}};
}

// Before: `kvscope-cli tokenize` of 120 KB of "a" with this Split took 7.9 s, and longer
// texts quadratically more.
TEST(HfHostileTokenizerTest, AQuadraticSplitRegexEndsWithAnErrorNamingTheStep) {
  const json f = split_file("a*b|a");
  EXPECT_THAT(encode_error(f, std::string(120'000, 'a')),
              AllOf(HasSubstr("tokenizer.json: pre_tokenizer Sequence[0] Split: regex \"a*b|a\""),
                    HasSubstr("needs more work than this text allows")));
  // The same file on ordinary text tokenizes as before.
  const auto tok = parse(f);
  EXPECT_EQ(tok->encode("aab ab", false), (std::vector<TokenId>{'a', 256, ' ', 256}));
}

// Before: 8 Replace steps each making 16 "a" of one took 64 bytes of input toward 2.7e11
// bytes (out of memory at 2.2 GB under a 4 GB limit).
TEST(HfHostileTokenizerTest, AReplaceStepThatMultipliesTheTextIsAnErrorNamingIt) {
  json f = tiny_file();
  f["normalizer"] = {
      {"type", "Sequence"},
      {"normalizers", json::array({replace("b", "c"), replace("a", std::string(16, 'a'))})}};
  EXPECT_THAT(encode_error(f, std::string(64, 'a')),
              HasSubstr("tokenizer.json: normalizer Sequence[1] Replace: would grow the text "
                        "from 64 to 1024 bytes (a step may make at most 8x its input plus 64"));

  // Steps within 8x each still stop at the request's ceiling, 8x its size plus 4 KiB:
  // 65 bytes make 520, 4160, then 33280 would pass 4616, and is not built.
  f["normalizer"] = {{"type", "Sequence"}, {"normalizers", json::array()}};
  for (int i = 0; i < 10; ++i) f["normalizer"]["normalizers"].push_back(replace("a", "aaaaaaaa"));
  EXPECT_THAT(encode_error(f, std::string(65, 'a')),
              HasSubstr("normalizer Sequence[2] Replace: would make 33280 bytes of text, more "
                        "than the 4616 this request allows"));
}

// Steps each within their bounds still add up: all steps of one request make at most 32
// bytes per byte of it plus 1 MiB; a file names at most 64 steps.
TEST(HfHostileTokenizerTest, StepsTogetherStopAtTheRequestsBudget) {
  json f = tiny_file();
  f["normalizer"] = {{"type", "Sequence"}, {"normalizers", json::array()}};
  f["normalizer"]["normalizers"].push_back(replace("a", "aaaaaaaa"));
  for (int i = 0; i < 9; ++i) f["normalizer"]["normalizers"].push_back(replace("b", "c"));
  EXPECT_THAT(encode_error(f, std::string(100'000, 'a')),
              HasSubstr("normalizer Sequence[5] Replace: the tokenizer's steps would make more "
                        "than 4248576 bytes of text for this 100000-byte request"));

  for (int i = 0; i < 60; ++i) f["normalizer"]["normalizers"].push_back(replace("b", "c"));
  EXPECT_THAT(load_error(f), HasSubstr("normalizer Sequence[64]: more than 64 steps"));
}

TEST(HfHostileTokenizerTest, TextAStepWouldInsertIsCappedWhenTheFileLoads) {
  const std::string mb(1 << 20, 'x');
  json f = tiny_file();
  f["normalizer"] = replace(" ", mb);
  EXPECT_THAT(load_error(f), HasSubstr("normalizer Replace: content is 1048576 bytes, more than "
                                       "the 256 a step may insert"));
  f = tiny_file();
  f["normalizer"] = {{"type", "Prepend"}, {"prepend", mb}};
  EXPECT_THAT(load_error(f), HasSubstr("normalizer Prepend: prepend is 1048576 bytes"));
  f = tiny_file();
  f["decoder"] = replace("a", mb);
  EXPECT_THAT(load_error(f), HasSubstr("decoder Replace: content is 1048576 bytes"));

  // Before: a 1 MB Metaspace replacement took 4,000 spaces to 4 GB.
  f = tiny_file();
  f["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", mb}, {"split", false}};
  EXPECT_THAT(load_error(f), HasSubstr("pre_tokenizer Metaspace: replacement is 1048576 bytes "
                                       "(1 to 256 allowed)"));
}

TEST(HfHostileTokenizerTest, ARunOfGrowthWithinTheInsertCapIsStillBounded) {
  json f = tiny_file();
  f["pre_tokenizer"] = {
      {"type", "Metaspace"}, {"replacement", std::string(200, 'x')}, {"split", false}};
  EXPECT_THAT(encode_error(f, std::string(4000, ' ')),
              HasSubstr("pre_tokenizer Metaspace: would grow the text from 4000 to 800200 bytes"));

  // A decoder that would grow every piece 200x is refused while the pieces are indexed.
  f = tiny_file();
  f["decoder"] = replace("a", std::string(200, 'y'));
  EXPECT_THAT(load_error(f), HasSubstr("decoder Replace: would grow the text from 1 to 200"));
}

// Real steps stay far inside the bounds: Llama 2's Prepend("▁") and Replace(" ", "▁") on a
// run of spaces (3x), a Metaspace on the same.
TEST(HfHostileTokenizerTest, RealStepsOnTheirWorstTextsStayWithinTheBounds) {
  json f = tiny_file();
  f["normalizer"] = {
      {"type", "Sequence"},
      {"normalizers",
       {{{"type", "Prepend"}, {"prepend", "\xe2\x96\x81"}}, replace(" ", "\xe2\x96\x81")}}};
  EXPECT_NO_THROW(parse(f)->encode(std::string(100'000, ' '), false));
  EXPECT_NO_THROW(parse(f)->encode("a", false));
  f = tiny_file();
  f["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xe2\x96\x81"}};
  EXPECT_NO_THROW(parse(f)->encode(std::string(100'000, ' '), false));
}

// Before: 20,000 added tokens sharing a prefix took 10 s for 50 KB (every token tested at
// every byte). AddedTokenMatcherTest counts the steps; here the ids are right.
TEST(HfHostileTokenizerTest, ManyAddedTokensSharingAPrefixAreMatchedInOnePass) {
  json f = tiny_file();
  for (int i = 0; i < 20000; ++i) {
    f["added_tokens"].push_back(
        {{"id", 260 + i}, {"content", std::string(10, 'a') + std::to_string(i)}});
  }
  const auto tok = parse(f);
  std::string text;
  std::vector<TokenId> want;
  while (text.size() < 50'000) {
    text += std::string(10, 'a') + "1234b";
    want.push_back(260 + 1234);
    want.push_back('b');
  }
  EXPECT_EQ(tok->encode(text, false), want);
}

TEST(HfHostileTokenizerTest, AddedTokensPastTheCapsAreRefused) {
  json f = tiny_file();
  const std::string long_token(1 << 18, 'z');
  for (int i = 0; i < 5; ++i) {
    f["added_tokens"].push_back({{"id", 260 + i}, {"content", long_token + std::to_string(i)}});
  }
  EXPECT_THAT(load_error(f), HasSubstr("added_tokens[5]: more than 1048576 bytes of content"));
}

// A tokenizer.json with `n_vocab` pieces ("a", "b", "ab", then numbers) and `n_merges`
// merges (all "a b"), written as text: the JSON reader's input, without a DOM to build it.
std::string sized_file(std::size_t n_vocab, std::size_t n_merges) {
  std::string vocab = R"("a":0,"b":1,"ab":2)";
  for (std::size_t i = 3; i < n_vocab; ++i) {
    vocab += ",\"" + std::to_string(i) + "\":" + std::to_string(i);
  }
  std::string merges;
  for (std::size_t i = 0; i < n_merges; ++i) merges += i ? ",\"a b\"" : "\"a b\"";
  return R"({"model": {"type": "BPE", "vocab": {)" + vocab + R"(}, "merges": [)" + merges + "]}}";
}

// The caps admit the largest published tokenizer, Gemma 3's 262,144 pieces and 514,906
// merges (Qwen2 has 151,643 and 151,387, Llama 3 128,256 and 280,147).
TEST(HfHostileTokenizerTest, TheCapsAdmitGemma3Sizes) {
  const auto tok = parse_hf_tokenizer(sized_file(262'144, 514'906), "tokenizer.json");
  EXPECT_EQ(tok->vocab_size(), 262'144);
  EXPECT_EQ(tok->encode("ab", false), (std::vector<TokenId>{2}));
}

// Before: 1,000,000 merges loaded (5.9 s and 611 MB for 46 MB; 0.85 s and 430 MB for the
// 12 MB of ["a", "b"] pairs written here).
TEST(HfHostileTokenizerTest, AVocabOrMergeListPastTheCapsIsRefusedNamingTheField) {
  try {
    parse_hf_tokenizer(sized_file(3, 786'433), "tokenizer.json");
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tokenizer.json: model.merges: 786433 merges, more than the "
                                    "786432 this reader accepts"));
  }
  try {
    parse_hf_tokenizer(sized_file(524'289, 0), "tokenizer.json");
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tokenizer.json: model.vocab: 524289 pieces, more than the "
                                    "524288 this reader accepts"));
  }
}

}  // namespace
}  // namespace kvscope
