// The scheduler over a backend that fails: a forward pass that throws ends the requests of
// that step with FinishReason::Error and the backend's message (their blocks released), and
// a NaN logit ends only the request it belongs to; the scheduler goes on with the others and
// with new requests, and nothing escapes step().
#include "run/scheduler/scheduler.h"

#include <limits>
#include <memory>
#include <stdexcept>
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

// The CPU backend, except that forward call number `throw_at` throws and call `nan_at`
// puts a NaN into the first logits row (1-based; 0 = never). Greedy steps go through
// forward too (ForwardingBackend).
class FaultyBackend final : public test::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  std::string name() const override { return "faulty " + inner_.name(); }
  void forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
               std::vector<float>& logits) override {
    ++calls_;
    if (calls_ == throw_at) throw std::runtime_error("simulated device failure");
    inner_.forward(chunks, kv, logits);
    if (calls_ == nan_at) logits[0] = std::numeric_limits<float>::quiet_NaN();
  }

  int throw_at = 0;
  int nan_at = 0;

 private:
  int calls_ = 0;
};

using SchedulerFault = test::WrappedScheduler<FaultyBackend>;

TEST_F(SchedulerFault, AFailingForwardEndsThatStepsRequestsWithTheMessage) {
  backend_->throw_at = 4;
  Recorded a, b;
  submit(0, 20, a);
  submit(1, 20, b);
  for (int s = 0; s < 3; ++s) ASSERT_TRUE(scheduler_->step());
  EXPECT_NO_THROW(scheduler_->step());
  for (const Recorded* r : {&a, &b}) {
    ASSERT_EQ(r->n_finished, 1);
    EXPECT_EQ(r->result.reason, FinishReason::Error);
    EXPECT_NE(r->result.error.find("simulated device failure"), std::string::npos)
        << r->result.error;
    EXPECT_EQ(r->result.generated.size(), 3u);
    EXPECT_EQ(r->streamed, r->result.text);
  }
  EXPECT_EQ(kv_->usage().n_used, 0);
  EXPECT_TRUE(scheduler_->idle());

  Recorded next;
  submit(2, 15, next);
  run();
  EXPECT_EQ(next.result.reason, FinishReason::Length);
  EXPECT_EQ(next.result.generated, solo_run(path_, story_prompts()[2], 15).generated);
}

TEST_F(SchedulerFault, ANanLogitEndsOnlyItsOwnRequest) {
  backend_->nan_at = 5;  // the first row of step 5 belongs to the oldest request, a
  Recorded a, b;
  submit(0, 20, a);
  submit(1, 20, b);
  run();
  ASSERT_EQ(a.n_finished, 1);
  EXPECT_EQ(a.result.reason, FinishReason::Error);
  EXPECT_NE(a.result.error.find("nan"), std::string::npos) << a.result.error;
  EXPECT_EQ(a.result.generated.size(), 4u);
  EXPECT_EQ(b.result.reason, FinishReason::Length);
  EXPECT_EQ(b.result.generated, solo_run(path_, story_prompts()[1], 20).generated);
  EXPECT_EQ(kv_->usage().n_used, 0);
}

}  // namespace
}  // namespace kvscope
