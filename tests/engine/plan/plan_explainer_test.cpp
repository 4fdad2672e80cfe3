#include "plan/plan_explainer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

PlanRequest llama_7b(KvDtype kv) {
  const ModelPreset& p = find_model_preset(test::model_presets(), "llama-7b");
  PlanRequest r =
      make_plan_request(p.spec, preset_weights(p.spec, p.n_params, WeightType::F16), kv, kv);
  r.context = 2048;
  r.budget.total_bytes = std::int64_t{24} << 30;
  return r;
}

TEST(PlanExplainer, WritesTheKvFormulaWithTheNumbersFilledIn) {
  const PlanRequest r = llama_7b(KvDtype::F16);
  const std::string text = explain_plan(r, plan_memory(r));
  EXPECT_THAT(text, HasSubstr("per token per layer = 32 KV heads x (K 128 x 2 B + V 128 x 2 B) "
                              "= 16,384 B"));
  EXPECT_THAT(text, HasSubstr("one block = 16 tokens x 32 layers x 16,384 B = 8,388,608 B"));
  EXPECT_THAT(text, HasSubstr("per sequence: ceil(2,048 / 16) = 128 blocks"));
  EXPECT_THAT(text,
              HasSubstr("1 sequence x 128 blocks x 8,388,608 B = 1,073,741,824 B (1.00 GiB)"));
  EXPECT_THAT(text, HasSubstr("6,738,415,616 parameters x 16 bits (f16) / 8 = 13,476,831,232 B"));
  EXPECT_THAT(text, HasSubstr("usable = 25,769,803,776 B x 0.90"));
  EXPECT_THAT(text, HasSubstr(": fits, "));
  EXPECT_THAT(text, Not(HasSubstr("Decode speed limit")));
}

TEST(PlanExplainer, ShowsQuantizationScalesAndTheWindow) {
  PlanRequest r = llama_7b(KvDtype::Int8);
  r.kv.groups[0].v_dtype = KvDtype::Int4;
  r.kv.groups[0].window = 1024;
  const std::string text = explain_plan(r, plan_memory(r));
  EXPECT_THAT(text, HasSubstr("K int8 / V int4, sliding window of 1,024 tokens"));
  EXPECT_THAT(text, HasSubstr("(K 128 B + 4 x 2 B scales + V 64 B + 4 x 2 B scales) = 6,656 B"));
  EXPECT_THAT(text, HasSubstr("blocks wholly before the window are released"));
}

TEST(PlanExplainer, Int4KeysShowTheOffsetsEveryBlockHolds) {
  PlanRequest r = llama_7b(KvDtype::Int4);
  std::string text = explain_plan(r, plan_memory(r));
  EXPECT_THAT(text, HasSubstr("per token per layer = 32 KV heads x (K 64 B + 8 x 2 x 2 B scales "
                              "and mins + V 64 B + 4 x 2 B scales) = 5,376 B"));
  EXPECT_THAT(text, HasSubstr("K offsets per block per layer = 32 KV heads x 128 x 2 B = 8,192 B"));
  EXPECT_THAT(text, HasSubstr("one block = 32 layers x (16 tokens x 5,376 B + 8,192 B) = "
                              "3,014,656 B"));
  EXPECT_THAT(text, HasSubstr("all layers: 188,416 B per token before rounding to blocks"));
  EXPECT_THAT(text, HasSubstr("1 sequence x 128 blocks x 3,014,656 B"));
  r.kv.block_size = 3;  // 8,192 B of offsets over 3 slots: 32 x (5,376 + 2,730.67) per token
  text = explain_plan(r, plan_memory(r));
  EXPECT_THAT(text, HasSubstr("all layers: 259,413.33 B per token before rounding to blocks"));
}

TEST(PlanExplainer, SaysWhyAPlanDoesNotFit) {
  PlanRequest r = llama_7b(KvDtype::F16);
  r.budget.total_bytes = std::int64_t{8} << 30;
  std::string text = explain_plan(r, plan_memory(r));
  EXPECT_THAT(text, HasSubstr("does not fit"));
  EXPECT_THAT(text, HasSubstr(" short"));
  r.budget.total_bytes = std::int64_t{80} << 30;
  r.context = 4096;  // LLaMA-7B's context is 2048
  text = explain_plan(r, plan_memory(r));
  EXPECT_THAT(text, HasSubstr("the context 4,096 exceeds the model's 2,048"));
}

TEST(PlanExplainer, AddsTheRooflineWhenGiven) {
  const PlanRequest r = llama_7b(KvDtype::F16);
  const std::string text = explain_plan(r, plan_memory(r), roofline_decode(r, 1008));
  EXPECT_THAT(text, HasSubstr("Decode speed limit"));
  EXPECT_THAT(text, HasSubstr("tokens/s <= 1 x 1008 GB/s / "));
}

}  // namespace
}  // namespace kvscope
