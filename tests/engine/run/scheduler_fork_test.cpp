// Forking a running request shares its KV blocks (copy-on-write, once, on the first write
// into the shared partial tail) and both continue with the greedy output of the original;
// seeded sampling is reproducible whatever runs beside it, and different seeds differ.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/engine_fixture.h"

namespace kvscope {
namespace {

constexpr std::int64_t kTokens = 60;

std::int64_t ceil_blocks(std::int64_t tokens) {
  return (tokens + 15) / 16;
}

// Forks the 5-token prompt's request after `before_fork` generated tokens (the cache then
// holds 5 + before_fork - 1 tokens) and checks the sharing step by step.
void fork_and_check(const std::string& model, std::int64_t before_fork) {
  Engine engine(model, small_options());
  const std::int64_t block_bytes = engine.kv_cache().layout(0).block_bytes();
  Recorded parent, child;
  const RequestId parent_id =
      engine.submit(greedy_request(engine, story_prompts()[0], kTokens), record_into(parent));
  while (static_cast<std::int64_t>(parent.ids.size()) < before_fork) ASSERT_TRUE(engine.step());
  const std::int64_t cached = 5 + before_fork - 1;
  const std::int64_t held = ceil_blocks(cached);
  ASSERT_EQ(engine.snapshot().n_used, held);

  engine.fork(parent_id, record_into(child));
  CacheSnapshot snap = engine.snapshot();
  EXPECT_EQ(snap.n_used, held);  // nothing copied yet
  EXPECT_EQ(snap.groups[0].n_shared, held);
  EXPECT_EQ(snap.shared_savings_bytes, held * block_bytes);
  for (const BlockInfo& b : snap.groups[0].blocks) EXPECT_TRUE(b.is_free() || b.refcount == 2);

  // Full blocks stay shared for good; a partial tail is copied once, by the first of the
  // two sequences that writes into it, and each sequence's later blocks are its own.
  const std::int64_t full = cached / 16;
  while (engine.step()) {
    snap = engine.snapshot();
    if (parent.finished()) break;
    const std::int64_t now = cached + static_cast<std::int64_t>(child.ids.size());
    EXPECT_EQ(snap.groups[0].n_shared, full) << now << " tokens";
    EXPECT_EQ(snap.n_used, full + 2 * (ceil_blocks(now) - full)) << now << " tokens";
    EXPECT_EQ(snap.shared_savings_bytes, full * block_bytes);
  }
  run_bounded(engine);

  const RequestResult& solo = solo_run(model, story_prompts()[0], kTokens);
  EXPECT_EQ(parent.result.reason, FinishReason::Length);
  EXPECT_EQ(parent.result.generated, solo.generated);
  EXPECT_EQ(child.result.reason, FinishReason::Length);
  EXPECT_EQ(child.result.generated, solo.generated);  // the parent's tokens, then its own
  EXPECT_EQ(child.result.text, solo.text);
  EXPECT_EQ(child.ids,
            std::vector<TokenId>(solo.generated.begin() + before_fork, solo.generated.end()));
  EXPECT_EQ(parent.streamed, parent.result.text);
  EXPECT_EQ(solo.text.substr(solo.text.size() - child.streamed.size()), child.streamed);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

TEST(SchedulerFork, ForkSharesBlocksAndCopiesThePartialTailOnce) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  fork_and_check(model, 29);  // 33 cached: two full blocks and a tail of one token
}

TEST(SchedulerFork, ForkAtABlockBoundaryCopiesNothing) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  fork_and_check(model, 28);  // 32 cached: two full blocks
}

TEST(SchedulerFork, CancellingTheChildLeavesTheParentAndItsBlocks) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  Recorded parent, child;
  const RequestId parent_id =
      engine.submit(greedy_request(engine, story_prompts()[0], kTokens), record_into(parent));
  while (parent.ids.size() < 20) ASSERT_TRUE(engine.step());
  const RequestId child_id = engine.fork(parent_id, record_into(child));
  ASSERT_TRUE(engine.step());
  engine.cancel(child_id);
  ASSERT_TRUE(engine.step());
  EXPECT_EQ(child.result.reason, FinishReason::Cancelled);
  EXPECT_EQ(engine.snapshot().groups[0].n_shared, 0);
  EXPECT_EQ(engine.snapshot().n_used, ceil_blocks(5 + 22 - 1));
  run_bounded(engine);
  EXPECT_EQ(parent.result.generated, solo_run(model, story_prompts()[0], kTokens).generated);
}

// Forked half-way through a chunked prompt: the partial block is shared, copied by the
// first chunk written after the fork, and both generate the whole original output.
TEST(SchedulerFork, ForkDuringChunkedPrefillGivesBothTheOriginalOutput) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions options = small_options();
  options.scheduler.max_batch_tokens = 3;
  Engine engine(model, options);
  Recorded parent, child;
  const RequestId parent_id =
      engine.submit(greedy_request(engine, story_prompts()[1], 30), record_into(parent));
  ASSERT_TRUE(engine.step());
  ASSERT_TRUE(engine.step());  // 6 of the 12 prompt tokens cached
  engine.fork(parent_id, record_into(child));
  EXPECT_EQ(engine.snapshot().groups[0].n_shared, 1);
  run_bounded(engine);
  const RequestResult& solo = solo_run(model, story_prompts()[1], 30);
  EXPECT_EQ(parent.result.generated, solo.generated);
  EXPECT_EQ(child.result.generated, solo.generated);
  EXPECT_EQ(child.ids, solo.generated);
  EXPECT_EQ(child.streamed, solo.text);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

// Parent and child at 64 tokens need 2 shared full blocks + 2 own blocks each = 6. With 5
// blocks the child, which needs its last block after the parent took the last free one,
// waits for the older parent to finish; with 4 the parent preempts the child, which is
// later recomputed from all of its tokens (unshared). Both keep the original output.
void fork_under_pressure(const std::string& model, std::int64_t n_blocks, bool expect_preemption) {
  Engine engine(model, test::pool_of(model, n_blocks));
  Recorded parent, child;
  const RequestId parent_id =
      engine.submit(greedy_request(engine, story_prompts()[0], kTokens), record_into(parent));
  while (parent.ids.size() < 29) ASSERT_TRUE(engine.step());
  engine.fork(parent_id, record_into(child));
  run_bounded(engine);
  EXPECT_EQ(engine.scheduler().stats().preemptions > 0, expect_preemption);
  EXPECT_EQ(child.result.recomputed_tokens > 0, expect_preemption);
  const RequestResult& solo = solo_run(model, story_prompts()[0], kTokens);
  EXPECT_EQ(parent.result.generated, solo.generated);
  EXPECT_EQ(child.result.generated, solo.generated);
  EXPECT_EQ(child.result.text, solo.text);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

TEST(SchedulerFork, ForkedChildShortOfABlockWaitsForTheParent) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  fork_under_pressure(model, 5, false);
}

TEST(SchedulerFork, ParentShortOfABlockPreemptsTheForkedChild) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  fork_under_pressure(model, 4, true);
}

GenerationRequest sampled(const Engine& engine, std::uint64_t seed) {
  GenerationRequest r = greedy_request(engine, story_prompts()[0], 50);
  r.sampling = SamplingParams{};
  r.sampling.temperature = 1.0f;
  r.sampling.seed = seed;
  return r;
}

TEST(SchedulerSampling, SameSeedGivesTheSameTokensAloneOrInABatch) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine first(model, small_options());
  const RequestResult alone = first.generate(sampled(first, 1234));
  ASSERT_EQ(alone.generated.size(), 50u);
  EXPECT_EQ(first.generate(sampled(first, 1234)).generated, alone.generated);

  EngineOptions chunked = small_options();
  chunked.scheduler.max_batch_tokens = 3;
  Engine second(model, chunked);
  Recorded batched, other;
  second.submit(greedy_request(second, story_prompts()[1], 30), record_into(other));
  second.submit(sampled(second, 1234), record_into(batched));
  second.submit(sampled(second, 99), {});
  run_bounded(second);
  EXPECT_EQ(batched.result.generated, alone.generated);
  EXPECT_EQ(other.result.generated, solo_run(model, story_prompts()[1], 30).generated);
}

TEST(SchedulerSampling, DifferentSeedsGiveDifferentTokens) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  const RequestResult a = engine.generate(sampled(engine, 1));
  const RequestResult b = engine.generate(sampled(engine, 2));
  EXPECT_NE(a.generated, b.generated);
  EXPECT_NE(a.generated, solo_run(model, story_prompts()[0], 50).generated);
}

}  // namespace
}  // namespace kvscope
