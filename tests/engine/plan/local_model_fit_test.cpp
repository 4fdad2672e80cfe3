// The planner's answer for a model found on disk is engine/plan's answer for the same
// model loaded: the request built from the loaded model's spec and exact weights, asked
// of plan_memory, max_context and best_kv_dtype directly.
#include "plan/local_model_fit.h"

#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/model.h"
#include "plan/memory_model.h"
#include "plan/solvers.h"
#include "plan/weight_footprint.h"
#include "support/test_data.h"

namespace kvscope {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

// The request as `plan` builds it for -m FILE --ctx N with K and V in `dtype`.
PlanRequest loaded_request(const Model& model, std::int64_t memory, std::int64_t context,
                           KvDtype dtype) {
  PlanRequest r = make_plan_request(model.spec(), model_weights(model), dtype, dtype);
  r.context = context;
  r.budget.total_bytes = memory;
  return r;
}

TEST(LocalModelFit, AgreesWithThePlannerOnTheLoadedModel) {
  KVSCOPE_REQUIRE_SHARED(smol, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  const LocalModel found = describe_gguf({smol});
  ASSERT_TRUE(found.ok()) << found.error;
  const auto model = load_model(smol);
  bool saw_fit = false, saw_short = false, saw_int8 = false;
  // From "not even the weights" through "int4 only" to "f16 at the full context".
  for (std::int64_t memory = 100 * kMiB; memory <= 1200 * kMiB; memory += 20 * kMiB) {
    for (std::int64_t context : {std::int64_t{512}, std::int64_t{8192}}) {
      SCOPED_TRACE(testing::Message() << memory / kMiB << " MiB, " << context << " tokens");
      const LocalFitAnswer a =
          answer_local_fit(found, {.memory_bytes = memory, .context = context});
      ASSERT_TRUE(a.ok()) << a.error;
      const auto best = best_kv_dtype(loaded_request(*model, memory, context, KvDtype::F16));
      EXPECT_EQ(a.kv_dtype, best.value_or(KvDtype::Int4));
      const PlanRequest r = loaded_request(*model, memory, context, a.kv_dtype);
      const MemoryPlan plan = plan_memory(r);
      EXPECT_EQ(a.context, context);
      EXPECT_EQ(a.fits, plan.fits);
      EXPECT_EQ(a.fits, best.has_value());
      EXPECT_EQ(a.max_context.tokens, max_context(r).tokens);
      EXPECT_EQ(a.short_by_bytes, plan.fits ? 0 : -plan.margin_bytes);
      saw_fit |= a.fits;
      saw_short |= !a.fits && a.short_by_bytes > 0;
      saw_int8 |= a.fits && a.kv_dtype == KvDtype::Int8;
    }
  }
  EXPECT_TRUE(saw_fit && saw_short && saw_int8) << "the sweep must cross every answer";
}

TEST(LocalModelFit, AnAskedDtypeAndTheModelsContextLimit) {
  KVSCOPE_REQUIRE_SHARED(stories, "models/stories260K.gguf");
  const LocalModel found = describe_gguf({stories});
  ASSERT_TRUE(found.ok()) << found.error;
  const auto model = load_model(stories);
  const std::int64_t memory = 8 * 1024 * kMiB;
  const LocalFitAnswer a = answer_local_fit(
      found, {.memory_bytes = memory, .context = 1 << 20, .kv_dtype = KvDtype::Int8});
  ASSERT_TRUE(a.ok()) << a.error;
  EXPECT_EQ(a.context, 2048) << "a context past the model's limit is answered at the limit";
  EXPECT_EQ(a.kv_dtype, KvDtype::Int8);
  EXPECT_TRUE(a.fits);
  const PlanRequest r = loaded_request(*model, memory, 2048, KvDtype::Int8);
  EXPECT_EQ(a.max_context.tokens, max_context(r).tokens);
  EXPECT_TRUE(a.max_context.limited_by_max_context);
  EXPECT_EQ(answer_local_fit(found, {.memory_bytes = memory}).context, 2048);
}

TEST(LocalModelFit, ABrokenEntryHasNoAnswer) {
  LocalModel broken;
  broken.error = "x.gguf: not a GGUF file";
  const LocalFitAnswer a = answer_local_fit(broken, {.memory_bytes = 1 << 30});
  EXPECT_FALSE(a.ok());
  EXPECT_THAT(a.error, testing::HasSubstr("not a GGUF file"));
  EXPECT_FALSE(a.fits);
}

}  // namespace
}  // namespace kvscope
