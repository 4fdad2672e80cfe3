// with_model_defaults and Engine::default_sampling: what a request that names no sampling
// value samples with, from KVScope's defaults and a folder's generation_config.json.
#include "run/model_sampling.h"

#include <climits>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/engine_fixture.h"
#include "support/tiny_hf_folder.h"

namespace kvscope {
namespace {

using nlohmann::json;

TEST(ModelSampling, NoValuesKeepTheBase) {
  SamplingParams base;
  base.temperature = 0.3f;
  base.top_k = 9;
  base.seed = 77;
  const SamplingParams p = with_model_defaults(SamplingDefaults{}, base);
  EXPECT_EQ(p.temperature, 0.3f);
  EXPECT_EQ(p.top_k, 9);
  EXPECT_EQ(p.top_p, base.top_p);
  EXPECT_EQ(p.min_p, base.min_p);
  EXPECT_EQ(p.repeat_penalty, base.repeat_penalty);
  EXPECT_EQ(p.repeat_last_n, base.repeat_last_n);
  EXPECT_EQ(p.seed, 77u);
}

// Llama 3 Instruct: temperature 0.6, top_p 0.9; top_k and min_p stay KVScope's.
TEST(ModelSampling, GivenValuesReplaceTheBaseFieldByField) {
  SamplingDefaults d;
  d.do_sample = true;
  d.temperature = 0.6;
  d.top_p = 0.9;
  const SamplingParams p = with_model_defaults(d);
  EXPECT_EQ(p.temperature, 0.6f);
  EXPECT_EQ(p.top_p, 0.9f);
  EXPECT_EQ(p.top_k, SamplingParams{}.top_k);
  EXPECT_EQ(p.min_p, SamplingParams{}.min_p);
  EXPECT_NO_THROW(validate(p));
}

TEST(ModelSampling, DoSampleFalseIsGreedyWhateverTheTemperature) {
  SamplingDefaults d;
  d.do_sample = false;
  d.temperature = 0.7;
  d.top_k = 5;
  const SamplingParams p = with_model_defaults(d);
  EXPECT_EQ(p.temperature, 0.0f);
  EXPECT_EQ(p.top_k, 5);
  EXPECT_TRUE(Sampler(p).picks_greedily());
}

// transformers and vLLM penalise every earlier token, the prompt's included.
TEST(ModelSampling, RepetitionPenaltyLooksAtTheWholeSequence) {
  SamplingDefaults d;
  d.repetition_penalty = 1.05;
  d.min_p = 0.0;
  const SamplingParams p = with_model_defaults(d);
  EXPECT_EQ(p.repeat_penalty, 1.05f);
  EXPECT_EQ(p.repeat_last_n, -1);
  EXPECT_EQ(p.min_p, 0.0f);
}

TEST(ModelSampling, TopKPastIntMaxKeepsEveryToken) {
  SamplingDefaults d;
  d.top_k = std::int64_t{1} << 40;
  EXPECT_EQ(with_model_defaults(d).top_k, INT_MAX);
}

TEST(ModelSampling, EngineDefaultsComeFromTheFolder) {
  const auto dir = test::scratch_dir();
  test::write_tiny_hf_folder(dir, {{"do_sample", true}, {"temperature", 0.5}, {"top_k", 3}});
  const Engine engine(dir.string(), small_options(64));
  const SamplingParams p = engine.default_sampling();
  EXPECT_EQ(p.temperature, 0.5f);
  EXPECT_EQ(p.top_k, 3);
  EXPECT_EQ(p.top_p, SamplingParams{}.top_p);
}

// The ids a request with the engine's defaults generates from `greedy`'s prompt.
std::vector<TokenId> with_defaults(Engine& engine, GenerationRequest r, std::uint64_t seed) {
  r.sampling = engine.default_sampling();
  r.sampling.seed = seed;
  return engine.generate(std::move(r)).generated;
}

// do_sample false: a request with the engine's defaults generates the greedy ids, whatever
// its seed; the same temperature with do_sample true does not (the tiny model's next-token
// distributions are nearly flat).
TEST(ModelSampling, DoSampleFalseFolderGeneratesTheGreedyIds) {
  const auto dir = test::scratch_dir();
  test::write_tiny_hf_folder(dir, {{"do_sample", false}, {"temperature", 0.9}});
  Engine engine(dir.string(), small_options(64));
  GenerationRequest greedy = greedy_request(engine, "abc abc", 12);
  greedy.stop_at_end_of_generation = false;
  const std::vector<TokenId> want = engine.generate(greedy).generated;
  ASSERT_EQ(want.size(), 12u);
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    EXPECT_EQ(with_defaults(engine, greedy, seed), want) << "seed " << seed;
  }

  test::write_tiny_hf_folder(dir, {{"do_sample", true}, {"temperature", 0.9}});
  Engine sampling(dir.string(), small_options(64));
  EXPECT_NE(with_defaults(sampling, greedy, 1), want);
}

}  // namespace
}  // namespace kvscope
