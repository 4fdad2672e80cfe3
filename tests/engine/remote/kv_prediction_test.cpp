#include "remote/kv_prediction.h"

#include <cmath>

#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"
#include "remote_fixtures.h"

namespace kvscope {
namespace {

TEST(KvPrediction, PlansThePoolVllmWouldBuildAndReadsTheServerAgainstIt) {
  const auto& models = test::model_presets();
  const auto& gpus = test::gpu_presets();
  // vLLM 0.6.4's log for this model and GPU at 0.90 and max_model_len 20,000 (vllm issue
  // 10517): "# GPU blocks: 1952", the pool the v1_2 fixture's cache_config_info reports.
  PoolQuestion q;
  q.context = 20000;
  q.version = VllmVersion::V0_6_4;
  const PlannedPool pool = plan_server_pool(find_model_preset(models, "llama-3.1-8b"),
                                            find_gpu_preset(gpus, "rtx-3090"), q);
  ASSERT_TRUE(pool.fits);
  EXPECT_EQ(pool.tokens, pool.blocks * 16);
  EXPECT_NEAR(static_cast<double>(pool.blocks), 1952.0, 0.02 * 1952);
  EXPECT_NE(pool.formula.find("activation"), std::string::npos);

  const ServerSample s =
      read_server_sample(parse_prometheus_text(test::read_remote_fixture("vllm_v1_2.prom")));
  const double tokens = 0.9718 * 31232;
  const KvComparison c = compare_kv(s, tokens, pool);
  EXPECT_DOUBLE_EQ(*c.live_pct, 97.18);
  EXPECT_EQ(*c.server_pool_tokens, 31232);
  EXPECT_DOUBLE_EQ(*c.planned_pct, 100.0 * tokens / static_cast<double>(pool.tokens));
  EXPECT_DOUBLE_EQ(*c.pool_ratio, 31232.0 / static_cast<double>(pool.tokens));
  EXPECT_DOUBLE_EQ(*c.pool_difference_pct,
                   100.0 * (static_cast<double>(pool.tokens) / 31232.0 - 1.0));
  EXPECT_LT(std::abs(*c.pool_difference_pct), 2.0);
}

TEST(KvPrediction, AServerThatSaysNoTokensHasNoPlannedLine) {
  const ServerSample s =
      read_server_sample(parse_prometheus_text(test::read_remote_fixture("llama_server_2.prom")));
  PlannedPool pool;
  pool.tokens = 1000;
  const KvComparison c = compare_kv(s, std::nullopt, pool);
  EXPECT_FALSE(c.live_pct);
  EXPECT_FALSE(c.planned_pct);
  EXPECT_FALSE(c.pool_ratio);
}

TEST(KvPrediction, ARefusedShapeIsAUsageError) {
  const auto& models = test::model_presets();
  const auto& gpus = test::gpu_presets();
  PoolQuestion q;
  q.tp = 3;  // 32 heads are not divisible by 3
  EXPECT_THROW(plan_server_pool(find_model_preset(models, "llama-3.1-8b"),
                                find_gpu_preset(gpus, "rtx-3090"), q),
               UsageError);
}

}  // namespace
}  // namespace kvscope
