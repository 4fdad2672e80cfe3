// The Engine facade on the real stories260K model: a memory budget on the CPU sizes the KV
// pool exactly as the planner (engine/plan) predicts, so the engine reaches the planner's
// max context and refuses one block more; evaluate() gives the logits generation computes.
#include "run/engine.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plan/memory_model.h"
#include "plan/solvers.h"
#include "plan/weight_footprint.h"
#include "support/engine_fixture.h"
#include "util/error.h"

namespace kvscope {
namespace {

constexpr std::int64_t kChunk = 64;

EngineOptions budget_options(std::uint64_t memory_bytes, std::int64_t sequences) {
  EngineOptions o = small_options(512);
  o.scheduler.max_batch_tokens = kChunk;
  o.memory_budget_bytes = memory_bytes;
  o.default_sequences = sequences;
  return o;
}

// The planner's question for the engine's model and settings.
PlanRequest plan_for(const Engine& engine, std::int64_t batch) {
  const EngineOptions& o = engine.options();
  PlanRequest r = make_plan_request(engine.spec(), model_weights(engine.model()), o.k_dtype,
                                    o.v_dtype, o.block_size);
  r.kv.max_context = engine.context_length();
  r.batch = batch;
  r.context = 1;
  r.prefill_chunk = o.scheduler.max_batch_tokens;
  r.backend = PlanBackend::Cpu;
  r.budget.total_bytes = static_cast<std::int64_t>(o.memory_budget_bytes);
  r.budget.utilisation = o.memory_utilisation;
  return r;
}

// The plan a user sees (`kvscope-cli plan`, batch 1) is the pool the engine builds, for
// every budget, whatever default_sequences says (it sizes only the pool without a budget).
TEST(EngineMemoryBudget, PoolIsThePlannersPoolForOneSequence) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  for (std::uint64_t bytes = 1'600'000; bytes <= 1'700'000; bytes += 7'919) {
    for (const std::int64_t sequences : {1, 4}) {
      const Engine engine(model, budget_options(bytes, sequences));
      const MemoryPlan plan = plan_memory(plan_for(engine, 1));
      EXPECT_EQ(engine.kv_cache().pool(0).n_blocks(), plan.kv_blocks_per_group)
          << bytes << " bytes, default_sequences " << sequences;
      const MemoryInfo info = engine.memory_info();
      EXPECT_EQ(info.total, bytes);
      EXPECT_EQ(static_cast<std::int64_t>(info.weights), plan.weights.bytes);
      EXPECT_EQ(static_cast<std::int64_t>(info.kv_pool), plan.kv_pool_bytes);
    }
  }
}

TEST(EngineMemoryBudget, ReachesThePlannersMaxContextAndRefusesOneBlockMore) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const std::uint64_t bytes = 1'650'000;
  Engine engine(model, budget_options(bytes, EngineOptions{}.default_sequences));
  const MaxContext max = max_context(plan_for(engine, 1));
  ASSERT_FALSE(max.limited_by_max_context) << "the test wants the pool to be the limit";
  ASSERT_GT(max.tokens, 64);
  const std::int64_t n_blocks = engine.kv_cache().pool(0).n_blocks();
  EXPECT_EQ(max.tokens, n_blocks * 16);

  // One request generating without end fills the cache to exactly the planner's maximum.
  GenerationRequest r = greedy_request(engine, story_prompts()[0], 100000);
  r.stop_at_end_of_generation = false;
  Recorded rec;
  RequestId id = 0;
  std::int64_t most_cached = 0;
  RequestCallbacks cb = record_into(rec);
  cb.on_token = [&, record = cb.on_token](const TokenEvent& ev) {
    record(ev);
    most_cached =
        std::max(most_cached, engine.kv_cache().n_tokens(engine.scheduler().sequence_of(id)));
  };
  id = engine.submit(r, cb);
  run_bounded(engine);
  EXPECT_EQ(most_cached, max.tokens);
  EXPECT_EQ(rec.result.reason, FinishReason::ContextFull);
  EXPECT_EQ(static_cast<std::int64_t>(rec.result.generated.size()), max.tokens - 5 + 1);
  EXPECT_NE(rec.result.error.find(std::to_string(max.tokens)), std::string::npos)
      << rec.result.error;
  EXPECT_NE(rec.result.error.find(std::to_string(n_blocks) + " blocks"), std::string::npos)
      << rec.result.error;

  // One token more needs one block more: the planner says it does not fit ...
  PlanRequest more = plan_for(engine, 1);
  more.context = max.tokens + 1;
  const MemoryPlan over = plan_memory(more);
  EXPECT_FALSE(over.fits);
  EXPECT_EQ(over.kv.blocks_per_group_needed, n_blocks + 1);
  // ... and the engine refuses a prompt of that length before generating, naming the numbers,
  std::vector<TokenId> all = r.prompt;
  all.insert(all.end(), rec.result.generated.begin(), rec.result.generated.end());
  GenerationRequest too_long = r;
  too_long.prompt.assign(all.begin(), all.begin() + max.tokens + 1);
  try {
    engine.submit(too_long);
    ADD_FAILURE() << "a prompt of " << max.tokens + 1 << " tokens was accepted";
  } catch (const CapacityError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(n_blocks) + " blocks"), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(max.tokens + 1)), std::string::npos) << what;
  }
  // ... while a prompt of exactly the maximum gets the token the long run sampled there.
  GenerationRequest exact = r;
  exact.prompt.assign(all.begin(), all.begin() + max.tokens);
  const RequestResult one = engine.generate(exact);
  EXPECT_EQ(one.reason, FinishReason::ContextFull);
  EXPECT_EQ(one.generated, std::vector<TokenId>{all[static_cast<std::size_t>(max.tokens)]});
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

TEST(EngineMemoryBudget, BudgetThatLeavesNothingForTheCacheIsACapacityError) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  try {
    Engine engine(model, budget_options(1'000'000, 1));
    FAIL() << "an engine was built in a budget smaller than its weights";
  } catch (const CapacityError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("1000000"), std::string::npos) << what;
    EXPECT_NE(what.find("1171200"), std::string::npos) << what;  // stories260K's weights
  }
}

TEST(EngineKvBudget, KvBudgetSizesThePoolDirectly) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions o = small_options();
  o.kv_budget_bytes = 10 * 10240 + 10239;  // stories260K, f16, 16 tokens: 10240 bytes a block
  const Engine engine(model, o);
  EXPECT_EQ(engine.kv_cache().layout(0).block_bytes(), 10240);
  EXPECT_EQ(engine.kv_cache().usage().n_blocks, 10);
}

// Log-probabilities of every vocab entry at each generated step, from the generation path.
std::vector<std::vector<float>> generation_logprobs(Engine& engine, const GenerationRequest& r,
                                                    std::vector<TokenId>& generated) {
  std::vector<std::vector<float>> steps;
  GenerationRequest all = r;
  all.top_logprobs = static_cast<int>(engine.tokenizer().vocab_size());
  generated = engine
                  .generate(all,
                            [&](const TokenEvent& ev) {
                              if (ev.token < 0) return;
                              std::vector<float> lp(ev.top.size());
                              for (const auto& [id, p] : ev.top)
                                lp[static_cast<std::size_t>(id)] = p;
                              steps.push_back(lp);
                            })
                  .generated;
  return steps;
}

TEST(EngineEvaluate, LogitsEqualWhatGenerationComputesForTheSameTokens) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  for (const std::int64_t chunk : {512, 5}) {
    EngineOptions o = small_options();
    o.scheduler.max_batch_tokens = chunk;
    Engine engine(model, o);
    const GenerationRequest r = greedy_request(engine, story_prompts()[1], 40);
    std::vector<TokenId> generated;
    const auto steps = generation_logprobs(engine, r, generated);
    ASSERT_EQ(steps.size(), 40u);
    std::vector<TokenId> text = r.prompt;
    text.insert(text.end(), generated.begin(), generated.end());
    const std::vector<float> logits = engine.evaluate(text);
    const auto vocab = static_cast<std::size_t>(engine.tokenizer().vocab_size());
    ASSERT_EQ(logits.size(), text.size() * vocab);
    EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
    float worst = 0;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      // Generated token k was sampled from the logits of position n_prompt - 1 + k.
      const std::span<const float> row(&logits[(r.prompt.size() - 1 + k) * vocab], vocab);
      EXPECT_EQ(std::max_element(row.begin(), row.end()) - row.begin(), generated[k]) << k;
      const float top = *std::max_element(row.begin(), row.end());
      double sum = 0;
      for (const float x : row) sum += std::exp(double{x} - top);
      for (std::size_t v = 0; v < vocab; ++v) {
        const auto lp = static_cast<float>(row[v] - top - std::log(sum));
        worst = std::max(worst, std::abs(lp - steps[k][v]));
      }
    }
    RecordProperty("worst logprob difference, chunk " + std::to_string(chunk),
                   std::to_string(worst));
    // A whole text is multiplied as a batch (ggml's tinyBLAS summation order) while generation
    // multiplies one token at a time (ggml's vec_dot order), exactly as llama.cpp does; the fp16
    // attention accumulator turns those last-bit differences into up to ~3e-3 on this small
    // model, so the two paths agree to 1e-2, not bit for bit. The argmax above must not move.
    EXPECT_LT(worst, 1e-2f) << "chunk " << chunk;
  }
}

TEST(EngineEvaluate, RunsBesideGenerationWithoutChangingIt) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  Recorded rec;
  engine.submit(greedy_request(engine, story_prompts()[0], 30), record_into(rec));
  for (int s = 0; s < 10; ++s) ASSERT_TRUE(engine.step());
  const std::vector<float> logits = engine.evaluate(engine.tokenize("The little dog ran", true));
  EXPECT_FALSE(logits.empty());
  run_bounded(engine);
  EXPECT_EQ(rec.result.generated, solo_run(model, story_prompts()[0], 30).generated);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

TEST(EngineEvaluate, RejectsEmptyAndOverlongTexts) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options(32));
  EXPECT_THROW(engine.evaluate({}), UsageError);
  const std::vector<TokenId> long_text(33, 300);
  try {
    engine.evaluate(long_text);
    FAIL() << "33 tokens evaluated in a context of 32";
  } catch (const CapacityError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("33"), std::string::npos) << what;
    EXPECT_NE(what.find("32"), std::string::npos) << what;
  }
  EXPECT_EQ(engine.evaluate(std::vector<TokenId>(32, 300)).size(), 32u * 512u);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

}  // namespace
}  // namespace kvscope

namespace kvscope {
namespace {

// A load asked to stop ends with CancelledError at its next check: after the file is read,
// and between the layers the CPU backend re-lays (SmolLM2's Q4_1 weights: one check each).
TEST(EngineCancelLoad, StopsAtTheNextCheckWithCancelledError) {
  KVSCOPE_REQUIRE_SHARED(model, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  for (int stop_at : {1, 3, 10}) {
    EngineOptions o;
    o.backend = BackendChoice::Cpu;
    int polls = 0;
    o.cancel_load = [&] { return ++polls >= stop_at; };
    EXPECT_THROW(Engine(model, o), CancelledError) << "stop at check " << stop_at;
    EXPECT_EQ(polls, stop_at);
  }
  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  int polls = 0;
  o.cancel_load = [&] { return ++polls < 0; };
  Engine engine(model, o);
  EXPECT_GE(polls, 30);  // every layer was a chance to stop
}

}  // namespace
}  // namespace kvscope
