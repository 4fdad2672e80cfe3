// An int4 cache with its exact tail (kv/exact_tail.h) on the real model. A query reads the
// same blocks exactly whether its prompt came in one step or a few tokens at a time beside
// other requests, so what it computes does not depend on the schedule; the engine turns the
// tail on by itself on the CPU, and off when asked.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/engine_fixture.h"

namespace kvscope {
namespace {

constexpr std::int64_t kTokens = 30;

EngineOptions int4_options(std::int64_t max_batch_tokens, std::int64_t tail = -1) {
  EngineOptions o = small_options();
  o.k_dtype = o.v_dtype = KvDtype::Int4;
  o.block_size = 4;  // many block boundaries inside the prompts and the replies
  o.scheduler.max_batch_tokens = max_batch_tokens;
  o.kv_exact_tail_blocks = tail;
  return o;
}

GenerationRequest logged_request(const Engine& engine, std::size_t prompt) {
  GenerationRequest r = greedy_request(engine, story_prompts()[prompt], kTokens);
  r.top_logprobs = 1;
  return r;
}

// Each prompt's chosen tokens and their log-probabilities.
std::vector<Recorded> generate(const std::string& model, const EngineOptions& o, bool together) {
  std::vector<Recorded> runs(story_prompts().size());
  if (together) {
    Engine engine(model, o);
    for (std::size_t i = 0; i < runs.size(); ++i)
      engine.submit(logged_request(engine, i), record_into(runs[i]));
    run_bounded(engine);
    return runs;
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Engine engine(model, o);
    engine.submit(logged_request(engine, i), record_into(runs[i]));
    run_bounded(engine);
  }
  return runs;
}

TEST(ExactTailEngine, TheScheduleChangesNothingAQueryReads) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const auto alone = generate(model, int4_options(512), false);
  const auto chunked = generate(model, int4_options(3), true);
  for (std::size_t i = 0; i < alone.size(); ++i) {
    ASSERT_EQ(chunked[i].ids, alone[i].ids) << "prompt " << i;
    ASSERT_EQ(chunked[i].events.size(), alone[i].events.size()) << "prompt " << i;
    for (std::size_t t = 0; t < alone[i].events.size(); ++t) {
      EXPECT_EQ(chunked[i].events[t].logprob, alone[i].events[t].logprob)
          << "prompt " << i << ", token " << t;
    }
  }
}

TEST(ExactTailEngine, OnByDefaultOnTheCpuAndOffWhenAsked) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const Engine on(model, int4_options(512));
  EXPECT_EQ(on.kv_cache().config().exact_tail_blocks, kDefaultExactTailBlocks);
  ASSERT_NE(on.kv_cache().exact_tail(0), nullptr);
  EXPECT_GT(on.memory_info().kv_pool,
            static_cast<std::uint64_t>(on.kv_cache().pool(0).n_blocks() *
                                       on.kv_cache().layout(0).block_bytes()));
  const Engine off(model, int4_options(512, 0));
  EXPECT_EQ(off.kv_cache().exact_tail(0), nullptr);
  EngineOptions f16 = small_options();
  const Engine plain(model, f16);
  EXPECT_EQ(plain.kv_cache().exact_tail(0), nullptr);  // nothing quantized, nothing to copy

  // and it changes what int4 attention reads: the first replies differ somewhere
  const auto with_tail = generate(model, int4_options(512), false);
  const auto without = generate(model, int4_options(512, 0), false);
  bool differ = false;
  for (std::size_t i = 0; i < with_tail.size(); ++i) {
    for (std::size_t t = 0; t < std::min(with_tail[i].events.size(), without[i].events.size());
         ++t) {
      differ = differ || with_tail[i].events[t].logprob != without[i].events[t].logprob;
    }
  }
  EXPECT_TRUE(differ);
}

}  // namespace
}  // namespace kvscope
