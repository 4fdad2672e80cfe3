// The scheduler on the real stories260K model, greedy: whatever runs beside a request (other
// sequences joining and leaving, its prompt cut into chunks, being preempted and recomputed
// because the KV pool is too small for everyone), it produces exactly the ids it produces
// when it runs alone.
#include "run/scheduler/scheduler.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/engine_fixture.h"

namespace kvscope {
namespace {

// Different lengths, so that the requests leave the batch at different steps.
const std::vector<std::int64_t> kMaxTokens = {40, 70, 25, 55};

void expect_same_as_solo(const std::string& model, const std::vector<Recorded>& runs,
                         const std::string& what) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RequestResult& solo = solo_run(model, story_prompts()[i], kMaxTokens[i]);
    const RequestResult& got = runs[i].result;
    ASSERT_EQ(runs[i].n_finished, 1) << what << ", request " << i;
    EXPECT_EQ(got.reason, FinishReason::Length) << what << ", request " << i << ": " << got.error;
    EXPECT_EQ(got.generated, solo.generated) << what << ", request " << i;
    EXPECT_EQ(got.text, solo.text) << what << ", request " << i;
    EXPECT_EQ(runs[i].ids, got.generated) << what << ", request " << i;
    EXPECT_EQ(runs[i].streamed, got.text) << what << ", request " << i;
  }
}

TEST(SchedulerBatching, RequestsSubmittedTogetherGiveTheirSoloOutputs) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  std::vector<Recorded> runs(story_prompts().size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    engine.submit(greedy_request(engine, story_prompts()[i], kMaxTokens[i]), record_into(runs[i]));
  }
  // Every step decodes all running sequences together; each leaves right after its last
  // token, the others go on.
  std::vector<std::int64_t> running;
  while (engine.step()) running.push_back(engine.scheduler().n_running());
  ASSERT_FALSE(running.empty());
  EXPECT_EQ(running.front(), 4);
  EXPECT_EQ(static_cast<std::int64_t>(running.size()), 70);  // the longest request's steps
  EXPECT_EQ(std::count(running.begin(), running.end(), 4), 25 - 1);
  EXPECT_EQ(running.back(), 0);
  EXPECT_EQ(engine.scheduler().stats().steps, 70);
  EXPECT_EQ(engine.scheduler().stats().preemptions, 0);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
  expect_same_as_solo(model, runs, "submitted together");
}

TEST(SchedulerBatching, RequestsJoiningMidwayGiveTheirSoloOutputs) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  std::vector<Recorded> runs(story_prompts().size());
  auto submit = [&](std::size_t i) {
    engine.submit(greedy_request(engine, story_prompts()[i], kMaxTokens[i]), record_into(runs[i]));
  };
  submit(0);
  submit(1);
  for (int s = 0; s < 10; ++s) ASSERT_TRUE(engine.step());
  EXPECT_EQ(engine.scheduler().n_running(), 2);
  submit(2);  // joins two sequences that are decoding: its prompt runs beside their tokens
  ASSERT_TRUE(engine.step());
  EXPECT_EQ(engine.scheduler().n_running(), 3);
  EXPECT_EQ(runs[2].ids.size(), 1u);
  for (int s = 0; s < 20; ++s) ASSERT_TRUE(engine.step());
  submit(3);
  run_bounded(engine);
  EXPECT_TRUE(engine.idle());
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
  expect_same_as_solo(model, runs, "joining midway");
}

TEST(SchedulerBatching, MaxRunningLimitsTheBatchAndTheRestWait) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions options = small_options();
  options.scheduler.max_running = 2;
  Engine engine(model, options);
  std::vector<Recorded> runs(story_prompts().size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    engine.submit(greedy_request(engine, story_prompts()[i], kMaxTokens[i]), record_into(runs[i]));
  }
  std::int64_t most_running = 0;
  while (engine.step()) {
    most_running = std::max(most_running, engine.scheduler().n_running());
    EXPECT_EQ(engine.scheduler().n_running() + engine.scheduler().n_waiting(),
              static_cast<std::int64_t>(std::count_if(
                  runs.begin(), runs.end(), [](const Recorded& r) { return !r.finished(); })));
  }
  EXPECT_EQ(most_running, 2);
  expect_same_as_solo(model, runs, "max_running 2");
}

// Two threads split the decoder's rows; the output is the same.
TEST(SchedulerBatching, TwoThreadsGiveTheSameOutputs) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions options = small_options();
  options.n_threads = 2;
  Engine engine(model, options);
  std::vector<Recorded> runs(story_prompts().size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    engine.submit(greedy_request(engine, story_prompts()[i], kMaxTokens[i]), record_into(runs[i]));
  }
  run_bounded(engine);
  expect_same_as_solo(model, runs, "two threads");
}

// Prompts of 5 to 12 tokens fed a few tokens per step (decode tokens of the others count
// against the same budget), with block sizes that put chunk and block boundaries anywhere.
class SchedulerChunkedPrefill
    : public ::testing::TestWithParam<std::pair<std::int64_t, std::int64_t>> {};

TEST_P(SchedulerChunkedPrefill, SmallStepBudgetGivesTheSoloOutputs) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const auto [max_batch_tokens, block_size] = GetParam();
  EngineOptions options = small_options();
  options.scheduler.max_batch_tokens = max_batch_tokens;
  options.block_size = block_size;
  Engine engine(model, options);
  std::vector<Recorded> runs(story_prompts().size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    engine.submit(greedy_request(engine, story_prompts()[i], kMaxTokens[i]), record_into(runs[i]));
  }
  // The 5-token first prompt needs ceil(5 / budget) steps before its first token.
  std::int64_t steps_to_first = 0;
  while (runs[0].ids.empty()) {
    ASSERT_TRUE(engine.step());
    ++steps_to_first;
  }
  EXPECT_EQ(steps_to_first, (5 + max_batch_tokens - 1) / max_batch_tokens);
  run_bounded(engine);
  const SchedulerStats& stats = engine.scheduler().stats();
  EXPECT_EQ(stats.prompt_tokens, 5 + 12 + 5 + 9);
  EXPECT_EQ(stats.decode_tokens, 40 + 70 + 25 + 55 - 4);  // the first token comes from the prompt
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
  expect_same_as_solo(model, runs,
                      "max_batch_tokens " + std::to_string(max_batch_tokens) + ", block size " +
                          std::to_string(block_size));
}

INSTANTIATE_TEST_SUITE_P(SchedulerBudgetAndBlockSize, SchedulerChunkedPrefill,
                         ::testing::Values(std::pair<std::int64_t, std::int64_t>{1, 16},
                                           std::pair<std::int64_t, std::int64_t>{3, 16},
                                           std::pair<std::int64_t, std::int64_t>{4, 1},
                                           std::pair<std::int64_t, std::int64_t>{7, 5}));

}  // namespace
}  // namespace kvscope
