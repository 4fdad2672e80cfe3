// When the KV pool runs out: sequences are preempted and recomputed without changing any
// output, a sequence that cannot grow even alone ends with ContextFull (the others finish
// normally), and a prompt the pool can never hold is refused before anything runs.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/engine_fixture.h"
#include "util/error.h"

namespace kvscope {
namespace {

// Prompts of 5, 12, 5 and 9 tokens: at their longest the four sequences cache 44, 81, 29
// and 63 tokens, 15 blocks of 16 in all, 6 for the longest alone.
const std::vector<std::int64_t> kMaxTokens = {40, 70, 25, 55};

struct PoolCase {
  std::int64_t n_blocks;
  std::int64_t block_size;
  std::int64_t max_batch_tokens;
};

class SchedulerPreemption : public ::testing::TestWithParam<PoolCase> {};

TEST_P(SchedulerPreemption, PoolTooSmallForAllPreemptsAndKeepsEveryOutput) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const PoolCase c = GetParam();
  EngineOptions options = pool_of(model, c.n_blocks, c.block_size);
  options.scheduler.max_batch_tokens = c.max_batch_tokens;
  Engine engine(model, options);
  ASSERT_EQ(engine.kv_cache().usage().n_blocks, c.n_blocks);

  std::vector<Recorded> runs(story_prompts().size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    engine.submit(greedy_request(engine, story_prompts()[i], kMaxTokens[i]), record_into(runs[i]));
  }
  run_bounded(engine);
  EXPECT_TRUE(engine.idle());

  const SchedulerStats& stats = engine.scheduler().stats();
  EXPECT_GT(stats.preemptions, 0);
  std::int64_t recomputed = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RequestResult& solo = solo_run(model, story_prompts()[i], kMaxTokens[i]);
    ASSERT_EQ(runs[i].n_finished, 1) << "request " << i;
    EXPECT_EQ(runs[i].result.reason, FinishReason::Length)
        << "request " << i << ": " << runs[i].result.error;
    EXPECT_EQ(runs[i].result.generated, solo.generated) << "request " << i;
    EXPECT_EQ(runs[i].result.text, solo.text) << "request " << i;
    EXPECT_EQ(runs[i].streamed, solo.text) << "request " << i;
    recomputed += runs[i].result.recomputed_tokens;
  }
  // Every prompt and generated token ran once, plus what preemption made run again.
  EXPECT_GT(recomputed, 0);
  EXPECT_EQ(stats.prompt_tokens + stats.decode_tokens, (5 + 12 + 5 + 9) + (190 - 4) + recomputed);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

INSTANTIATE_TEST_SUITE_P(SchedulerSmallPools, SchedulerPreemption,
                         ::testing::Values(PoolCase{8, 16, 512}, PoolCase{6, 16, 3},
                                           PoolCase{24, 4, 512}, PoolCase{22, 4, 6},
                                           PoolCase{90, 1, 512}));

TEST(SchedulerPreemptionCancel, CancellingAPreemptedRequestKeepsItsTextAndFreesItsSequence) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, pool_of(model, 6));
  std::vector<Recorded> runs(story_prompts().size());
  std::vector<RequestId> ids;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ids.push_back(engine.submit(greedy_request(engine, story_prompts()[i], kMaxTokens[i]),
                                record_into(runs[i])));
  }
  // Step until some request sits preempted in the queue, then cancel it.
  std::size_t victim = runs.size();
  for (int s = 0; s < 500 && victim == runs.size(); ++s) {
    ASSERT_TRUE(engine.step());
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const SeqId seq = engine.scheduler().sequence_of(ids[i]);
      if (seq >= 0 && engine.kv_cache().has_sequence(seq) && engine.kv_cache().is_preempted(seq)) {
        victim = i;
      }
    }
  }
  ASSERT_LT(victim, runs.size()) << "no request was preempted";
  const std::size_t had = runs[victim].ids.size();
  ASSERT_GT(had, 0u);
  engine.cancel(ids[victim]);
  run_bounded(engine);
  EXPECT_EQ(runs[victim].result.reason, FinishReason::Cancelled);
  EXPECT_EQ(runs[victim].result.generated.size(), had);
  EXPECT_EQ(runs[victim].streamed, runs[victim].result.text);
  EXPECT_EQ(runs[victim].result.text,
            solo_run(model, story_prompts()[victim], static_cast<std::int64_t>(had)).text);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (i == victim) continue;
    EXPECT_EQ(runs[i].result.generated,
              solo_run(model, story_prompts()[i], kMaxTokens[i]).generated);
  }
  EXPECT_TRUE(engine.kv_cache().sequence_ids().empty());
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

TEST(SchedulerContextFull, LoneSequenceOutOfBlocksEndsWithContextFullAndOthersFinish) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, pool_of(model, 8));  // 128 tokens
  Recorded a, b;
  engine.submit(greedy_request(engine, story_prompts()[0], 200), record_into(a));  // 5 + 200
  engine.submit(greedy_request(engine, story_prompts()[1], 90), record_into(b));   // 12 + 90
  run_bounded(engine);

  ASSERT_TRUE(b.finished());
  EXPECT_EQ(b.result.reason, FinishReason::Length) << b.result.error;
  EXPECT_EQ(b.result.generated, solo_run(model, story_prompts()[1], 90).generated);

  ASSERT_TRUE(a.finished());
  EXPECT_EQ(a.result.reason, FinishReason::ContextFull);
  // 128 tokens cached (5 prompt + 123 generated) and the token sampled from the last one.
  ASSERT_EQ(a.result.generated.size(), 128u - 5u + 1u);
  const std::vector<TokenId>& solo = solo_run(model, story_prompts()[0], 200).generated;
  EXPECT_TRUE(std::equal(a.result.generated.begin(), a.result.generated.end(), solo.begin()));
  EXPECT_EQ(a.streamed, a.result.text);
  EXPECT_NE(a.result.error.find("128"), std::string::npos) << a.result.error;
  EXPECT_NE(a.result.error.find("8 blocks"), std::string::npos) << a.result.error;
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

TEST(SchedulerContextFull, PromptTheWholePoolCannotHoldIsRefusedBeforeGenerating) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, pool_of(model, 2));  // 32 tokens
  GenerationRequest r = greedy_request(
      engine,
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
      "park. One day, she saw a big, red ball.",
      10);
  ASSERT_GT(r.prompt.size(), 32u);
  const std::string n_prompt = std::to_string(r.prompt.size());
  Recorded rec;
  try {
    engine.submit(r, record_into(rec));
    FAIL() << "a prompt of " << n_prompt << " tokens was accepted by a pool of 32 tokens";
  } catch (const CapacityError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("2 blocks"), std::string::npos) << what;
    EXPECT_NE(what.find(n_prompt), std::string::npos) << what;
  }
  EXPECT_TRUE(engine.idle());
  EXPECT_FALSE(engine.step());
  EXPECT_EQ(rec.n_finished, 0);

  // The engine is fine: a prompt that fits runs.
  engine.submit(greedy_request(engine, story_prompts()[0], 20), record_into(rec));
  run_bounded(engine);
  EXPECT_EQ(rec.result.generated, solo_run(model, story_prompts()[0], 20).generated);
}

TEST(SchedulerContextFull, PoolBudgetBelowOneBlockIsACapacityErrorAtLoad) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions options = small_options();
  options.kv_budget_bytes = 1000;
  try {
    Engine engine(model, options);
    FAIL() << "an engine was built with a KV budget of 1000 bytes";
  } catch (const CapacityError& e) {
    EXPECT_NE(std::string(e.what()).find("1000"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvscope
