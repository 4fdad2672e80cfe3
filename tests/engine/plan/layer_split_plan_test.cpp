// The layer split planner (plan/layer_split_plan.h): the most layers whose GPU side fits, each
// side's terms adding up to the whole model's, and the roofline over both memories.
#include "plan/layer_split_plan.h"

#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"
#include "plan/kv_footprint.h"

namespace kvscope {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

LayerSplitRequest qwen3_14b(std::int64_t vram, std::int64_t context) {
  const ModelPreset& p = find_model_preset(test::model_presets(), "qwen3-14b");
  LayerSplitRequest r;
  r.plan = make_plan_request(p.spec, preset_weights(p.spec, p.n_params, WeightType::Q4_K_M),
                             KvDtype::F16, KvDtype::F16);
  r.plan.context = context;
  r.plan.budget.total_bytes = vram;
  set_preset_layer_bytes(r, WeightType::Q4_K_M);
  return r;
}

// Qwen3-14B at Q4_K_M (8.9 GB) with a 16k context on an 8 GiB GPU: part of it fits.
TEST(LayerSplitPlan, TheMostLayersWhoseGpuSideFitsAndNotOneMore) {
  const LayerSplitRequest r = qwen3_14b(8 * kGiB, 16384);
  const LayerSplitPlan plan = plan_layer_split(r);
  ASSERT_GT(plan.gpu_layers, 0);
  ASSERT_LT(plan.gpu_layers, 40);
  EXPECT_TRUE(plan.fits);
  EXPECT_LE(plan.gpu.total(), plan.gpu_usable);
  LayerSplitRequest one_more = r;
  one_more.gpu_layers = plan.gpu_layers + 1;
  const LayerSplitPlan over = plan_layer_split(one_more);
  EXPECT_FALSE(over.fits);
  EXPECT_GT(over.gpu.total(), over.gpu_usable);
  // the sides share the model: weights and KV add up to the whole model's
  EXPECT_EQ(plan.gpu.weights + plan.cpu.weights, r.plan.weights.bytes);
  KvCacheConfig all = r.plan.kv;
  all.max_context = r.plan.context;
  EXPECT_EQ(plan.gpu.kv + plan.cpu.kv, kv_group_pools_bytes(all, 16384 / 16));
  // the GPU's pools hold at least the context, and the CPU's as many blocks of its layers
  EXPECT_GE(plan.kv_blocks_per_group * 16, r.plan.context);
  EXPECT_GE(plan.gpu.kv_pool, plan.gpu.kv);
  EXPECT_EQ(plan.cpu.kv_pool * plan.gpu_layers, plan.gpu.kv_pool * (40 - plan.gpu_layers));
}

TEST(LayerSplitPlan, WholeModelOnALargeGpuAndNothingOnATinyOne) {
  const LayerSplitPlan big = plan_layer_split(qwen3_14b(24 * kGiB, 16384));
  EXPECT_EQ(big.gpu_layers, 40);
  EXPECT_EQ(big.cpu.total(), 0);
  EXPECT_EQ(big.gpu.weights, qwen3_14b(24 * kGiB, 16384).plan.weights.bytes);
  const LayerSplitPlan tiny = plan_layer_split(qwen3_14b(kGiB / 2, 16384));
  EXPECT_EQ(tiny.gpu_layers, 0);
  EXPECT_TRUE(tiny.fits);
  EXPECT_EQ(tiny.gpu.total(), 0);
  EXPECT_EQ(tiny.cpu.weights, qwen3_14b(kGiB, 16384).plan.weights.bytes);
}

// seconds per step = GPU bytes / GPU bandwidth + CPU bytes / CPU bandwidth; the CPU side
// streams its layers, its KV and the output head, the GPU side its layers and KV.
TEST(LayerSplitPlan, TheRooflineAddsEachSidesBytesOverItsOwnBandwidth) {
  LayerSplitRequest r = qwen3_14b(8 * kGiB, 16384);
  r.gpu_bandwidth_gb_s = 272;
  r.cpu_bandwidth_gb_s = 60;
  const LayerSplitPlan plan = plan_layer_split(r);
  ASSERT_GT(plan.gpu_bytes_per_step, 0);
  ASSERT_GT(plan.cpu_bytes_per_step, 0);
  EXPECT_DOUBLE_EQ(plan.seconds_per_step, static_cast<double>(plan.gpu_bytes_per_step) / 272e9 +
                                              static_cast<double>(plan.cpu_bytes_per_step) / 60e9);
  EXPECT_DOUBLE_EQ(plan.tokens_per_s, 1.0 / plan.seconds_per_step);
  // untied Qwen3-14B: the CPU reads its weights but the token table, of which the token's row
  const std::int64_t row = r.embedding_bytes / r.plan.spec.vocab_size;
  EXPECT_EQ(plan.cpu_bytes_per_step - (plan.cpu.weights - r.embedding_bytes + row),
            r.plan.batch * kv_bytes_read_per_token(
                               [&] {
                                 KvCacheConfig c = r.plan.kv;
                                 c.groups = {c.groups.front()};
                                 c.groups.front().layers.clear();
                                 for (std::int64_t l = plan.gpu_layers; l < 40; ++l) {
                                   c.groups.front().layers.push_back(l);
                                 }
                                 c.max_context = r.plan.context;
                                 return c;
                               }(),
                               r.plan.context));
  // more layers on the GPU: a faster bound
  LayerSplitRequest fewer = r;
  fewer.gpu_layers = plan.gpu_layers / 2;
  EXPECT_LT(plan_layer_split(fewer).tokens_per_s, plan.tokens_per_s);
}

}  // namespace
}  // namespace kvscope
