// The scheduler asks the backend for greedy picks instead of logits exactly when every
// request of the step picks greedily and wants no log-probabilities; either way a request
// gets the same tokens.
#include "run/scheduler/scheduler.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/generation_fixtures.h"
#include "wrapped_scheduler.h"

namespace kvscope {
namespace {

using test::record_into;
using test::Recorded;
using test::solo_run;
using test::story_prompts;

// The CPU backend, counting which of its two entry points each step took.
class CountingBackend final : public test::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
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

  int logits_steps = 0;
  int greedy_steps = 0;
  bool lose_picks = false;  // a broken backend: one pick fewer than rows
};

using SchedulerGreedy = test::WrappedScheduler<CountingBackend>;

TEST_F(SchedulerGreedy, GreedyRequestsTakeOnlyThePicks) {
  Recorded a, b;
  submit(0, 30, a);
  submit(1, 20, b);
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
  submit(0, 25, greedy);
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
  submit(0, 10, a);
  submit(1, 10, b);
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
