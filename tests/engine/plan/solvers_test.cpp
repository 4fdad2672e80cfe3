#include "plan/solvers.h"

#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"
#include "util/error.h"

namespace kvscope {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

PlanRequest preset(const char* slug, WeightType weights, KvDtype kv) {
  const ModelPreset& p = find_model_preset(test::model_presets(), slug);
  return make_plan_request(p.spec, preset_weights(p.spec, p.n_params, weights), kv, kv);
}

const GpuPreset& gpu(const char* slug) {
  return find_gpu_preset(test::gpu_presets(), slug);
}

// The example. Mistral-7B, fp16: 2 x 32 layers x 8 KV heads x 128 x 2 B = 128 KiB
// per token; 8 GiB / 128 KiB = 65,536 tokens, 32,768 for each of 2 sequences. (A popular
// article prints 8,192 here: off by a factor of 4.) The figure assumes every layer keeps
// every token, so the window is switched off and the model's context limit lifted, leaving
// memory as the only limit.
PlanRequest mistral_full_attention(std::int64_t n_kv_heads) {
  const ModelPreset& p = find_model_preset(test::model_presets(), "mistral-7b-v0.1");
  ModelSpec spec = p.spec;
  spec.sliding_window = 0;
  spec.context_length = std::int64_t{1} << 20;
  spec.n_kv_heads = n_kv_heads;
  PlanRequest r = make_plan_request(spec, preset_weights(spec, p.n_params, WeightType::F16),
                                    KvDtype::F16, KvDtype::F16);
  r.batch = 2;
  r.kv_budget_bytes = 8 * kGiB;
  return r;
}

TEST(Solvers, MistralWith8KvHeadsReaches32768TokensPerSequenceIn8GiB) {
  const MaxContext m = max_context(mistral_full_attention(8));
  EXPECT_EQ(m.tokens, 32'768);
  EXPECT_FALSE(m.limited_by_max_context);
}

TEST(Solvers, TheSameShapeWith32KvHeadsReachesOnly8192) {
  const MaxContext m = max_context(mistral_full_attention(32));
  EXPECT_EQ(m.tokens, 8'192);
  EXPECT_FALSE(m.limited_by_max_context);
}

TEST(Solvers, MistralsSlidingWindowCapsItsKvSoTheContextLimitIsReachedFirst) {
  PlanRequest r = preset("mistral-7b-v0.1", WeightType::F16, KvDtype::F16);
  r.batch = 2;
  r.kv_budget_bytes = 8 * kGiB;
  const MaxContext m = max_context(r);
  EXPECT_EQ(m.tokens, 32'768);
  EXPECT_TRUE(m.limited_by_max_context);
  // Growing 512 tokens a step, a sequence holds at most 288 blocks of 2 MiB (16 tokens x
  // 32 layers x 4 KiB): 4096 window keys + 512 new ones.
  r.context = 32'768;
  EXPECT_EQ(plan_memory(r).kv.pool_bytes_needed, 2 * 288 * (2LL << 20));
}

TEST(Solvers, SmallestGpuForLlama2At4096Tokens) {
  PlanRequest r = preset("llama-2-7b", WeightType::Q4_K_M, KvDtype::F16);
  r.context = 4096;
  // q4_k_m 4,076,741,448 + KV 2 GiB + workspace 746,764,968 = 6.49 GiB <= 8 GiB x 0.9: the
  // first 8 GiB card in the list.
  const GpuPreset* g = smallest_gpu(r, test::gpu_presets());
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->slug, "rtx-3070");
  // f16 weights 13,476,831,232 + 2 GiB + 746,764,968 = 16,371,079,848 > 16 GiB x 0.9 =
  // 15,461,882,265, so the next size up: 24 GiB.
  r.weights = preset_weights(r.spec, 6'738'415'616, WeightType::F16);
  g = smallest_gpu(r, test::gpu_presets());
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->slug, "rtx-3090");
}

TEST(Solvers, Llama2_70bInF16FitsNoSingleGpuButQ8_0FitsAn80GiBOne) {
  PlanRequest r = preset("llama-2-70b", WeightType::F16, KvDtype::F16);
  r.context = 4096;
  // 137,953,296,384 B of weights > 141 GiB x 0.9 = 136,257,837,465.
  EXPECT_EQ(smallest_gpu(r, test::gpu_presets()), nullptr);
  // q8_0 73,287,688,704 + KV 4096 x 327,680 = 1,342,177,280 + workspace 219,472,392 +
  // 128,000 + 102,760,448 + 536,870,912 = 75,489,097,736 <= 80 GiB x 0.9 = 77,309,411,328.
  r.weights = preset_weights(r.spec, 68'976'648'192, WeightType::Q8_0);
  const GpuPreset* g = smallest_gpu(r, test::gpu_presets());
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->slug, "a100-80gb");
}

TEST(Solvers, BestKvDtypeFallsFromF16ToInt8ToInt4AsTheBatchGrows) {
  PlanRequest r = preset("llama-2-7b", WeightType::Q4_K_M, KvDtype::F16);
  r.context = 4096;
  r.budget.total_bytes = gpu("rtx-3070").memory_bytes;  // usable 7,730,941,132
  r.batch = 1;  // f16: 4,076,741,448 + 2 GiB + 746,764,968 = 6,970,990,064
  EXPECT_EQ(best_kv_dtype(r), KvDtype::F16);
  r.batch = 2;  // f16: + 4 GiB = 9,118,619,128; int8 (136 B vectors): 7,105,353,208
  EXPECT_EQ(best_kv_dtype(r), KvDtype::Int8);
  r.batch = 3;  // int8: 8,246,350,336; int4 (K 96 B, V 72 B vectors + offsets): 7,139,054,080
  EXPECT_EQ(best_kv_dtype(r), KvDtype::Int4);
  r.batch = 4;  // int8: 9,387,345,416; int4: 7,910,950,408
  EXPECT_EQ(best_kv_dtype(r), std::nullopt);
}

// The mixed rung (int8 keys, int4 values) sits between int8 and int4: for every batch the
// answer is the first rung whose plan fits, and some batch needs exactly the mixed one.
TEST(Solvers, BestKvDtypesTriesInt8KeysWithInt4ValuesBeforeInt4) {
  PlanRequest r = preset("llama-2-7b", WeightType::Q4_K_M, KvDtype::F16);
  r.context = 4096;
  r.budget.total_bytes = gpu("rtx-3070").memory_bytes;
  const KvDtypes ladder[] = {{KvDtype::F16, KvDtype::F16},
                             {KvDtype::Int8, KvDtype::Int8},
                             {KvDtype::Int8, KvDtype::Int4},
                             {KvDtype::Int4, KvDtype::Int4}};
  bool saw_mixed = false;
  for (std::int64_t batch = 1; batch <= 8; ++batch) {
    r.batch = batch;
    std::optional<KvDtypes> want;
    for (const KvDtypes d : ladder) {
      PlanRequest t = r;
      for (LayerGroupConfig& g : t.kv.groups) g.k_dtype = d.k, g.v_dtype = d.v;
      if (plan_memory(t).fits) {
        want = d;
        break;
      }
    }
    EXPECT_EQ(best_kv_dtypes(r), want) << "batch " << batch;
    saw_mixed = saw_mixed || (want && want->k != want->v);
    // the uniform answer never names the mixed rung
    const auto uniform = best_kv_dtype(r);
    if (want) {
      EXPECT_EQ(uniform, want->k == want->v ? want->k : KvDtype::Int4) << "batch " << batch;
    }
  }
  EXPECT_TRUE(saw_mixed);
}

TEST(Solvers, MaxBatchOnAn4090At4096Tokens) {
  PlanRequest r = preset("llama-2-7b", WeightType::Q4_K_M, KvDtype::F16);
  r.context = 4096;
  r.budget.total_bytes = gpu("rtx-4090").memory_bytes;
  // KV budget = 23,192,823,398 - 4,076,741,448 - 104,071,168 - 536,870,912 - 128,000 x batch;
  // at batch 8 that is 18,474,115,870 B = 2202 blocks of 8 MiB >= 8 x 256; batch 9 needs 2304.
  EXPECT_EQ(max_batch(r), 8);
  r.batch = 8;
  EXPECT_TRUE(plan_memory(r).fits);
  r.batch = 9;
  EXPECT_FALSE(plan_memory(r).fits);
}

TEST(Solvers, MaxContextAgreesWithThePlanOnEitherSide) {
  PlanRequest r = preset("llama-3-8b", WeightType::Q4_K_M, KvDtype::Int8);
  r.budget.total_bytes = gpu("rtx-4060").memory_bytes;
  r.batch = 6;  // 6 x 8192 tokens x 69,632 B would need 3.4 GB of KV beside 4.9 GB of weights
  const MaxContext m = max_context(r);
  ASSERT_GT(m.tokens, 0);
  ASSERT_FALSE(m.limited_by_max_context);
  r.context = m.tokens;
  EXPECT_TRUE(plan_memory(r).fits);
  r.context = m.tokens + 1;
  EXPECT_FALSE(plan_memory(r).fits);
}

TEST(Solvers, NothingFitsGivesZero) {
  PlanRequest r = preset("llama-2-70b", WeightType::F16, KvDtype::F16);
  r.budget.total_bytes = gpu("rtx-4060").memory_bytes;
  EXPECT_EQ(max_context(r).tokens, 0);
  EXPECT_EQ(max_batch(r), 0);
}

TEST(Solvers, RooflineIsBandwidthOverBytesReadPerStep) {
  PlanRequest r = preset("llama-2-7b", WeightType::Q4_K_M, KvDtype::F16);
  r.context = 4096;
  const RooflineEstimate e = roofline_decode(r, gpu("rtx-4090").bandwidth_gb_s);
  // Weights minus the untied token table plus its one row: 4,076,741,448 - 79,298,560 + 2,479.
  EXPECT_EQ(e.weight_bytes_read, 3'997'445'367);
  EXPECT_EQ(e.kv_bytes_read, 4096LL * 524'288);
  EXPECT_EQ(e.bytes_per_step, 6'144'929'015);
  EXPECT_NEAR(e.tokens_per_s, 1008e9 / 6'144'929'015.0, 1e-9);
  EXPECT_NEAR(e.tokens_per_s, 164.04, 0.01);
  r.batch = 4;  // four sequences share one read of the weights
  const RooflineEstimate b = roofline_decode(r, 1008);
  EXPECT_EQ(b.bytes_per_step, 3'997'445'367 + 4 * 4096LL * 524'288);
  EXPECT_NEAR(b.tokens_per_s, 4 * b.tokens_per_s_per_sequence, 1e-9);
  EXPECT_THROW(roofline_decode(r, 0.0), UsageError);
}

}  // namespace
}  // namespace kvscope
