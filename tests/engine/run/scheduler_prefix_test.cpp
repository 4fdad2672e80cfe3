// Kept prefixes: a request with keep_cache leaves its tokens in the cache; a later request
// starting with the same tokens shares those blocks instead of running them again, and its
// output is exactly what it is without sharing. Kept prefixes give way to live sequences.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/engine_fixture.h"

namespace kvscope {
namespace {

constexpr std::int64_t kTokens = 30;

EngineOptions blocks_of(std::int64_t block_size) {
  EngineOptions o = small_options();
  o.block_size = block_size;
  return o;
}

// Runs `request` to its end with keep_cache; returns what it produced.
RequestResult run_kept(Engine& engine, GenerationRequest request) {
  request.keep_cache = true;
  Recorded rec;
  engine.submit(std::move(request), record_into(rec));
  run_bounded(engine);
  EXPECT_EQ(rec.n_finished, 1);
  return rec.result;
}

TEST(SchedulerPrefix, RegeneratingSharesThePromptAndGivesTheSameGreedyReply) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, blocks_of(4));
  const GenerationRequest request = greedy_request(engine, story_prompts()[1], kTokens);
  ASSERT_EQ(request.prompt.size(), 12u);
  const RequestResult first = run_kept(engine, request);
  EXPECT_EQ(first.reused_tokens, 0);
  EXPECT_EQ(engine.scheduler().n_kept(), 1);
  // The kept sequence holds its 12 + 30 - 1 cached tokens: 11 blocks of 4.
  EXPECT_EQ(engine.snapshot().n_used, 11);

  Recorded again;
  engine.submit(request, record_into(again));
  ASSERT_TRUE(engine.step());
  // The first 11 prompt tokens come from the kept prefix: blocks 0 and 1 stay shared, the
  // partly used block 2 was copied before the 12th token was written into it.
  const CacheSnapshot snap = engine.snapshot();
  EXPECT_EQ(snap.groups[0].n_shared, 2);
  EXPECT_EQ(snap.n_used, 11 + 1);
  run_bounded(engine);
  ASSERT_EQ(again.n_finished, 1);
  EXPECT_EQ(again.result.reused_tokens, 11);
  EXPECT_EQ(again.result.generated, first.generated);
  EXPECT_EQ(again.result.generated, solo_run(model, story_prompts()[1], kTokens).generated);
  EXPECT_EQ(engine.scheduler().stats().reused_tokens, 11);
}

TEST(SchedulerPrefix, TheNextTurnReusesThePromptAndTheReply) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  const RequestResult first = run_kept(engine, greedy_request(engine, story_prompts()[0], kTokens));
  // The next turn: the whole conversation so far, then new text.
  GenerationRequest next = greedy_request(engine, story_prompts()[0], kTokens);
  next.prompt.insert(next.prompt.end(), first.generated.begin(), first.generated.end());
  const std::vector<TokenId> more = engine.tokenize(" They played all day.", false);
  next.prompt.insert(next.prompt.end(), more.begin(), more.end());
  const RequestResult second = run_kept(engine, next);
  EXPECT_EQ(second.reused_tokens, 5 + kTokens - 1);  // everything the first one cached

  Engine fresh(model, small_options());
  Recorded alone;
  fresh.submit(next, record_into(alone));
  run_bounded(fresh);
  EXPECT_EQ(alone.result.reused_tokens, 0);
  EXPECT_EQ(second.generated, alone.result.generated);
  EXPECT_EQ(second.text, alone.result.text);
}

TEST(SchedulerPrefix, SeededSamplingIsReproducibleFromAKeptPrefix) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  GenerationRequest r = greedy_request(engine, story_prompts()[3], kTokens);
  r.sampling.temperature = 1.0f;
  r.sampling.seed = 5;
  const RequestResult first = run_kept(engine, r);
  const RequestResult same = run_kept(engine, r);
  r.sampling.seed = 6;
  const RequestResult other = run_kept(engine, r);
  EXPECT_EQ(same.reused_tokens, 8);
  EXPECT_EQ(same.generated, first.generated);
  EXPECT_NE(other.generated, first.generated);
  EXPECT_EQ(engine.scheduler().n_kept(), 3);
}

TEST(SchedulerPrefix, KeptPrefixesGiveWayToNewRequests) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  // 4 blocks of 16: the kept 5 + 40 - 1 = 44 tokens hold 3 of them; the next request
  // (12 + 40 - 1 = 51 tokens) needs all 4.
  Engine engine(model, pool_of(model, 4));
  run_kept(engine, greedy_request(engine, story_prompts()[0], 40));
  EXPECT_EQ(engine.snapshot().n_used, 3);
  Recorded rec;
  engine.submit(greedy_request(engine, story_prompts()[1], 40), record_into(rec));
  run_bounded(engine);
  ASSERT_EQ(rec.n_finished, 1);
  EXPECT_EQ(rec.result.reason, FinishReason::Length) << rec.result.error;
  EXPECT_EQ(rec.result.generated, solo_run(model, story_prompts()[1], 40).generated);
  EXPECT_EQ(rec.result.recomputed_tokens, 0);
  EXPECT_EQ(engine.scheduler().n_kept(), 0);
  EXPECT_EQ(engine.scheduler().stats().evictions, 1);
  EXPECT_EQ(engine.scheduler().stats().preemptions, 0);
}

TEST(SchedulerPrefix, ReleasingAKeptPrefixFreesItsBlocks) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  Recorded rec;
  GenerationRequest r = greedy_request(engine, story_prompts()[0], kTokens);
  r.keep_cache = true;
  const RequestId id = engine.submit(r, record_into(rec));
  run_bounded(engine);
  const SeqId seq = engine.scheduler().sequence_of(id);
  ASSERT_GE(seq, 0);
  EXPECT_EQ(engine.kv_cache().n_tokens(seq), 5 + kTokens - 1);
  EXPECT_EQ(engine.snapshot().n_used, 3);
  engine.release_cache(id);
  EXPECT_EQ(engine.snapshot().n_used, 0);
  EXPECT_EQ(engine.scheduler().sequence_of(id), -1);
  engine.release_cache(id);  // nothing left: no effect
  EXPECT_EQ(engine.scheduler().n_kept(), 0);
}

TEST(SchedulerPrefix, WithASlidingWindowAPrefixIsSharedWhileTheWindowStillHoldsIt) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions o = small_options();
  const std::int64_t n_layers = Engine(model, o).spec().n_layers;
  o.layer_groups = uniform_layer_groups(n_layers, KvDtype::F16, 32);
  Engine engine(model, o);
  // 12 + 10 - 1 = 21 cached tokens: the window (32) has released nothing.
  const GenerationRequest shortr = greedy_request(engine, story_prompts()[1], 10);
  const RequestResult first = run_kept(engine, shortr);
  const RequestResult again = run_kept(engine, shortr);
  EXPECT_EQ(again.reused_tokens, 11);
  EXPECT_EQ(again.generated, first.generated);

  // 12 + 60 - 1 = 71 cached: blocks 0 and 1 are gone, so the prompt cannot be shared.
  Engine fresh(model, o);
  const GenerationRequest longr = greedy_request(fresh, story_prompts()[1], 60);
  const RequestResult long_first = run_kept(fresh, longr);
  const RequestResult long_again = run_kept(fresh, longr);
  EXPECT_EQ(long_again.reused_tokens, 0);
  EXPECT_EQ(long_again.generated, long_first.generated);
  EXPECT_EQ(fresh.scheduler().n_kept(), 2);
}

}  // namespace
}  // namespace kvscope
