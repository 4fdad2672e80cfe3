// The scheduler asks the backend for greedy picks instead of logits exactly when every
// request of the step picks greedily and wants no log-probabilities; either way a request
// gets the same tokens.
#include "run/scheduler.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "generation_fixtures.h"
#include "kv/kv_cache_manager.h"
#include "model/model.h"
#include "plan/kv_footprint.h"
#include "run/cpu_backend.h"
#include "support/test_data.h"

namespace kvscope {
namespace {

using test::record_into;
using test::Recorded;
using test::solo_run;
using test::story_prompts;

// The CPU backend, counting which of its two entry points each step took.
class CountingBackend final : public Backend {
 public:
  explicit CountingBackend(Backend& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  void forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
               std::vector<float>& logits) override {
    ++logits_steps;
    inner_.forward(chunks, kv, logits);
  }
  void forward_greedy(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                      std::vector<TokenId>& picks) override {
    ++greedy_steps;
    inner_.forward_greedy(chunks, kv, picks);
    if (lose_picks) picks.pop_back();
  }
  bool uses_host_kv_storage() const override { return inner_.uses_host_kv_storage(); }
  MemoryInfo memory_info(const KvCacheManager& kv) const override { return inner_.memory_info(kv); }

  int logits_steps = 0;
  int greedy_steps = 0;
  bool lose_picks = false;  // a broken backend: one pick fewer than rows

 private:
  Backend& inner_;
};

class SchedulerGreedy : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto found = test::find_shared("models/stories260K.gguf");
    if (!found) GTEST_SKIP() << "needs models/stories260K.gguf in " << test::shared_dir();
    path_ = found->string();
    model_ = load_model(path_);
    tokenizer_ = make_tokenizer(*model_);
    CpuBackendOptions cpu;
    cpu.n_threads = 1;
    cpu.context_length = test::kContext;
    cpu_ = std::make_unique<CpuBackend>(*model_, cpu);
    backend_ = std::make_unique<CountingBackend>(*cpu_);
    KvCacheConfig config = default_kv_config(model_->spec(), KvDtype::F16, KvDtype::F16, 16);
    config.max_context = test::kContext;
    config.n_blocks = 64;
    kv_ = std::make_unique<KvCacheManager>(config);
    scheduler_ = std::make_unique<Scheduler>(*backend_, *kv_, *tokenizer_, SchedulerOptions{});
  }

  GenerationRequest request(std::size_t prompt, std::int64_t max_tokens) const {
    GenerationRequest r;
    r.prompt = tokenizer_->encode(story_prompts()[prompt], true);
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0;
    return r;
  }

  void run() {
    for (int s = 0; s < 1000 && scheduler_->step(); ++s) {
    }
    EXPECT_TRUE(scheduler_->idle());
  }

  std::string path_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<CpuBackend> cpu_;
  std::unique_ptr<CountingBackend> backend_;
  std::unique_ptr<KvCacheManager> kv_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerGreedy, GreedyRequestsTakeOnlyThePicks) {
  Recorded a, b;
  scheduler_->submit(request(0, 30), record_into(a));
  scheduler_->submit(request(1, 20), record_into(b));
  run();
  EXPECT_EQ(backend_->logits_steps, 0);
  EXPECT_EQ(backend_->greedy_steps, 30);
  EXPECT_EQ(a.result.generated, solo_run(path_, story_prompts()[0], 30).generated);
  EXPECT_EQ(b.result.generated, solo_run(path_, story_prompts()[1], 20).generated);
}

TEST_F(SchedulerGreedy, LogProbabilitiesOrAPenaltyNeedTheLogits) {
  GenerationRequest with_logprobs = request(2, 12);
  with_logprobs.top_logprobs = 3;
  Recorded a;
  scheduler_->submit(with_logprobs, record_into(a));
  run();
  EXPECT_EQ(backend_->greedy_steps, 0);
  EXPECT_EQ(backend_->logits_steps, 12);
  EXPECT_EQ(a.result.generated, solo_run(path_, story_prompts()[2], 12).generated);
  ASSERT_FALSE(a.events.empty());
  EXPECT_EQ(a.events[0].top.size(), 3u);

  GenerationRequest penalized = request(2, 12);
  penalized.sampling.repeat_penalty = 1.3f;
  Recorded b;
  scheduler_->submit(penalized, record_into(b));
  run();
  EXPECT_EQ(backend_->greedy_steps, 0);
  EXPECT_EQ(backend_->logits_steps, 24);
}

TEST_F(SchedulerGreedy, OneSampledRequestMakesItsStepsTakeTheLogits) {
  GenerationRequest sampled = request(1, 10);
  sampled.sampling.temperature = 0.9f;
  sampled.sampling.seed = 3;
  Recorded greedy, other;
  scheduler_->submit(request(0, 25), record_into(greedy));
  scheduler_->submit(sampled, record_into(other));
  run();
  EXPECT_EQ(backend_->logits_steps, 10);  // while the sampled request runs
  EXPECT_EQ(backend_->greedy_steps, 15);  // the greedy one alone afterwards
  EXPECT_EQ(greedy.result.generated, solo_run(path_, story_prompts()[0], 25).generated);
  EXPECT_EQ(other.result.generated.size(), 10u);
}

TEST_F(SchedulerGreedy, ABackendReturningTooFewPicksEndsTheStepsRequestsWithTheReason) {
  backend_->lose_picks = true;
  Recorded a, b;
  scheduler_->submit(request(0, 10), record_into(a));
  scheduler_->submit(request(1, 10), record_into(b));
  EXPECT_NO_THROW(run());
  for (const Recorded* r : {&a, &b}) {
    ASSERT_EQ(r->n_finished, 1);
    EXPECT_EQ(r->result.reason, FinishReason::Error);
    EXPECT_NE(r->result.error.find("1 greedy picks for 2 sequences"), std::string::npos)
        << r->result.error;
  }
  EXPECT_EQ(kv_->usage().n_used, 0);
}

}  // namespace
}  // namespace kvscope
