// generation_config.json: the ids that end a generation and the sampling values a model's
// authors publish (do_sample, temperature, top_k, top_p, min_p, repetition_penalty), read
// from the text and through a whole folder the test writes.
#include "model/generation_config.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/model.h"
#include "support/test_data.h"
#include "support/tiny_hf_folder.h"
#include "util/error.h"

namespace kvscope {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kSource = "llama/generation_config.json";

GenerationConfig parse(const json& j) {
  return parse_generation_config(j.dump(), kSource, 128);
}

void expect_error(const json& j, const std::vector<std::string>& parts) {
  try {
    parse(j);
    ADD_FAILURE() << "expected a ModelError for " << j.dump();
  } catch (const ModelError& e) {
    for (const auto& p : parts) EXPECT_THAT(e.what(), HasSubstr(p)) << j.dump();
  }
}

// Llama 3.1 8B Instruct's file, as published.
TEST(GenerationConfig, Llama3InstructGivesItsSamplingValuesAndThreeEosIds) {
  const auto g = parse({{"bos_token_id", 12},
                        {"do_sample", true},
                        {"eos_token_id", {12, 13, 19}},
                        {"temperature", 0.6},
                        {"top_p", 0.9},
                        {"transformers_version", "4.42.3"}});
  EXPECT_EQ(g.eos_token_ids, (std::vector<std::int64_t>{12, 13, 19}));
  const SamplingDefaults& d = g.sampling;
  EXPECT_EQ(d.source, kSource);
  EXPECT_EQ(d.do_sample, true);
  EXPECT_EQ(d.temperature, 0.6);
  EXPECT_EQ(d.top_p, 0.9);
  EXPECT_FALSE(d.top_k);
  EXPECT_FALSE(d.min_p);
  EXPECT_FALSE(d.repetition_penalty);
  EXPECT_TRUE(d.any());
  EXPECT_TRUE(d.notes.empty());
}

// Qwen2.5 Instruct's: every value, integral numbers where floats are meant included.
TEST(GenerationConfig, EveryValueIsReadAndIntegersServeAsNumbers) {
  const auto d = parse({{"do_sample", true},
                        {"temperature", 1},
                        {"top_k", 20},
                        {"top_p", 0.8},
                        {"min_p", 0},
                        {"repetition_penalty", 1.05}})
                     .sampling;
  EXPECT_EQ(d.temperature, 1.0);
  EXPECT_EQ(d.top_k, 20);
  EXPECT_EQ(d.top_p, 0.8);
  EXPECT_EQ(d.min_p, 0.0);
  EXPECT_EQ(d.repetition_penalty, 1.05);
}

// SmolLM2's and Mistral's files: ids only, nothing about sampling.
TEST(GenerationConfig, IdsOnlyMeansNoSamplingValues) {
  const auto g = parse({{"bos_token_id", 1}, {"eos_token_id", 2}, {"pad_token_id", nullptr}});
  EXPECT_EQ(g.eos_token_ids, std::vector<std::int64_t>{2});
  EXPECT_FALSE(g.sampling.any());
  EXPECT_FALSE(parse(json::object()).sampling.any());
}

TEST(GenerationConfig, WrongJsonTypesNameTheFileAndField) {
  expect_error({{"temperature", "0.7"}}, {kSource, "temperature: expected a number, found string"});
  expect_error({{"do_sample", 1}}, {kSource, "do_sample: expected true or false, found number"});
  expect_error({{"top_k", 2.5}}, {kSource, "top_k: expected an integer, found number"});
  expect_error({{"top_p", {0.9}}}, {kSource, "top_p: expected a number, found array"});
  expect_error({{"repetition_penalty", true}}, {kSource, "repetition_penalty: expected a number"});
  expect_error(json::array({1, 2}), {kSource, "expected a JSON object, found array of 2"});
}

// What transformers' samplers refuse when do_sample is true (its TemperatureLogitsWarper,
// TopK/TopP/MinP warpers and RepetitionPenaltyLogitsProcessor raise ValueError).
TEST(GenerationConfig, OutOfRangeValuesNameTheFileFieldAndRule) {
  expect_error({{"temperature", -0.5}}, {kSource, "temperature = -0.5: must be >= 0"});
  expect_error({{"do_sample", true}, {"top_p", 1.5}}, {"top_p = 1.5: must be in [0, 1]"});
  expect_error({{"top_p", -0.1}}, {"top_p = -0.1: must be in [0, 1]"});
  expect_error({{"min_p", 2}}, {"min_p = 2: must be in [0, 1]"});
  expect_error({{"top_k", -1}}, {"top_k = -1: must be >= 0 (0 = off)"});
  expect_error({{"repetition_penalty", 0}}, {"repetition_penalty = 0: must be > 0"});
  // Edges are fine: 0 = greedy / off, 1 = off.
  EXPECT_NO_THROW(parse({{"temperature", 0}, {"top_p", 1}, {"min_p", 1}, {"top_k", 0}}));
}

// transformers builds no sampler when do_sample is false, so it never looks at these values
// (it only warns); the repetition penalty still applies to greedy decoding there.
TEST(GenerationConfig, BadSamplingValuesBesideDoSampleFalseAreIgnoredWithANote) {
  const auto d =
      parse({{"do_sample", false}, {"temperature", -1}, {"top_p", 1.5}, {"top_k", 5}}).sampling;
  EXPECT_EQ(d.do_sample, false);
  EXPECT_FALSE(d.temperature);
  EXPECT_FALSE(d.top_p);
  EXPECT_EQ(d.top_k, 5);
  ASSERT_EQ(d.notes.size(), 2u);
  EXPECT_THAT(d.notes[0], HasSubstr("generation_config.json: temperature = -1 ignored"));
  EXPECT_THAT(d.notes[0], HasSubstr("do_sample is false"));
  EXPECT_THAT(d.notes[1], HasSubstr("top_p = 1.5 ignored"));
  expect_error({{"do_sample", false}, {"repetition_penalty", -1}},
               {"repetition_penalty = -1: must be > 0"});
}

TEST(GenerationConfig, EosIdsOutsideTheVocabOrNotIdsAreNamed) {
  expect_error({{"eos_token_id", {2, 128}}}, {"eos_token_id[1] = 128 is out of range"});
  expect_error({{"eos_token_id", "2"}}, {"eos_token_id: expected a token id, found string"});
}

TEST(GenerationConfig, HugeFileIsRefusedBeforeItIsParsed) {
  const std::string text = "{\"x\": \"" + std::string(2 << 20, 'a') + "\"}";
  EXPECT_THROW(parse_generation_config(text, kSource, 128), ModelError);
}

// The whole folder: the model carries the file's values, and a bad one stops the load
// naming the folder's file.
TEST(GenerationConfig, AFolderModelCarriesItsSamplingDefaults) {
  const auto dir = test::scratch_dir();
  test::write_tiny_hf_folder(dir, {{"do_sample", true}, {"temperature", 0.6}, {"top_k", 7}});
  const auto model = load_model(dir.string());
  const SamplingDefaults& d = model->sampling_defaults();
  EXPECT_EQ(d.temperature, 0.6);
  EXPECT_EQ(d.top_k, 7);
  EXPECT_EQ(d.source, (dir / "generation_config.json").string());

  test::write_tiny_hf_folder(dir, {{"temperature", -2}});
  try {
    load_model(dir.string());
    ADD_FAILURE() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr((dir / "generation_config.json").string() +
                                    ": temperature = -2: must be >= 0"));
  }
}

TEST(GenerationConfig, AFolderWithoutTheFileHasNoDefaults) {
  const auto dir = test::scratch_dir();
  test::write_tiny_hf_folder(dir);
  EXPECT_FALSE(load_model(dir.string())->sampling_defaults().any());
}

}  // namespace
}  // namespace kvscope
