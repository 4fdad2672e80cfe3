#include "plan/parallel_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"
#include "kv/format/kv_format.h"
#include "plan/parallel_solvers.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;

// A preset served in f16 on `gpu`, one GPU's budget, batch x context.
ParallelRequest request(const char* slug, const char* gpu, std::int64_t tp, std::int64_t pp,
                        std::int64_t batch, std::int64_t context) {
  const ModelPreset& p = find_model_preset(test::model_presets(), slug);
  ParallelRequest r;
  r.base = make_plan_request(p.spec, preset_weights(p.spec, p.n_params, WeightType::F16),
                             KvDtype::F16, KvDtype::F16);
  r.base.budget.total_bytes = find_gpu_preset(test::gpu_presets(), gpu).memory_bytes;
  r.base.batch = batch;
  r.base.context = context;
  r.n_params = p.n_params;
  r.shape = {tp, pp, 0};
  return r;
}

// The allocator's own size function, for a stage of `layers` layers and `kv_heads` heads.
std::int64_t allocator_block_bytes(const ModelSpec& s, std::int64_t layers, std::int64_t kv_heads) {
  return layers *
         kv_bytes_per_block_per_layer(KvDtype::F16, KvDtype::F16, kv_heads, s.head_dim, 16);
}

std::string shape_error(const char* slug, ParallelShape shape) {
  ParallelRequest r = request(slug, "h100-sxm", 1, 1, 1, 1024);
  r.shape = shape;
  try {
    plan_parallel(r);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UsageError for tp " << shape.tp << " pp " << shape.pp;
  return "";
}

TEST(ParallelPlan, KvHeadsSplitUntilTpPassesTheirCountThenEachRankKeepsOne) {
  EXPECT_EQ(kv_heads_per_rank(8, 1), 8);
  EXPECT_EQ(kv_heads_per_rank(8, 4), 2);
  EXPECT_EQ(kv_heads_per_rank(8, 8), 1);
  EXPECT_EQ(kv_heads_per_rank(4, 8), 1);  // TinyLlama on 8 GPUs: replicated twice
  EXPECT_EQ(kv_heads_per_rank(1, 8), 1);  // multi-query: replicated on every GPU
}

TEST(ParallelPlan, EachGpuHoldsTheKvBytesOfItsHeadsAndLayersByTheAllocatorsFunction) {
  // Llama-3-70B: 64 heads, 8 KV heads, 80 layers.
  for (const std::int64_t tp : {1, 2, 4, 8}) {
    const ParallelPlan p = plan_parallel(request("llama-3-70b", "h100-sxm", tp, 1, 4, 4096));
    const ModelSpec& s = find_model_preset(test::model_presets(), "llama-3-70b").spec;
    ASSERT_EQ(p.stages.size(), 1u);
    EXPECT_EQ(p.kv_heads_per_rank, 8 / tp);
    EXPECT_EQ(p.stages[0].plan.kv_block_set_bytes, allocator_block_bytes(s, 80, 8 / tp)) << tp;
    EXPECT_EQ(p.stages[0].plan.kv.pool_bytes_needed,
              4 * (4096 / 16) * allocator_block_bytes(s, 80, 8 / tp));
  }
}

TEST(ParallelPlan, ReplicatedKvHeadsCostEveryGpuAWholeHead) {
  // TinyLlama has 32 heads and 4 KV heads; at tp 8 each GPU holds one, so the node stores
  // 8 heads' KV, twice the model's, while at tp 4 it stores exactly the model's.
  const ModelSpec& s = find_model_preset(test::model_presets(), "tinyllama-1.1b").spec;
  const ParallelPlan tp4 = plan_parallel(request("tinyllama-1.1b", "rtx-4090", 4, 1, 2, 2048));
  const ParallelPlan tp8 = plan_parallel(request("tinyllama-1.1b", "rtx-4090", 8, 1, 2, 2048));
  // tp 7 divides the 28 attention heads but neither divides nor is a multiple of 4 KV heads
  EXPECT_THAT(shape_error("qwen2.5-7b", {7, 1, 0}), HasSubstr("4 KV heads"));
  EXPECT_EQ(tp4.kv_heads_per_rank, 1);
  EXPECT_EQ(tp8.kv_heads_per_rank, 1);
  EXPECT_EQ(tp8.stages[0].plan.kv_block_set_bytes, allocator_block_bytes(s, s.n_layers, 1));
  EXPECT_EQ(tp8.stages[0].plan.kv_block_set_bytes, tp4.stages[0].plan.kv_block_set_bytes);
  const std::int64_t single = allocator_block_bytes(s, s.n_layers, s.n_kv_heads);
  EXPECT_EQ(4 * tp4.stages[0].plan.kv_block_set_bytes, single);
  EXPECT_EQ(8 * tp8.stages[0].plan.kv_block_set_bytes, 2 * single);
}

TEST(ParallelPlan, PipelineStagesFollowVllmLeftoverLayersGoToTheStagesBeforeTheLast) {
  auto sizes = [](std::int64_t layers, std::int64_t pp) {
    std::vector<std::int64_t> out;
    std::int64_t next = 0;
    for (const PipelineStage& s : pipeline_stages(layers, pp)) {
      EXPECT_EQ(s.first_layer, next);
      next += s.n_layers;
      out.push_back(s.n_layers);
    }
    EXPECT_EQ(next, layers);
    return out;
  };
  EXPECT_EQ(sizes(80, 3), (std::vector<std::int64_t>{27, 27, 26}));
  EXPECT_EQ(sizes(32, 3), (std::vector<std::int64_t>{11, 11, 10}));
  EXPECT_EQ(sizes(7, 4), (std::vector<std::int64_t>{2, 2, 2, 1}));
  EXPECT_EQ(sizes(30, 4), (std::vector<std::int64_t>{7, 8, 8, 7}));
  EXPECT_EQ(sizes(32, 1), (std::vector<std::int64_t>{32}));
  const std::vector<PipelineStage> st = pipeline_stages(80, 3);
  EXPECT_TRUE(st[0].embeddings && !st[0].output_head);
  EXPECT_TRUE(!st[1].embeddings && !st[1].output_head);
  EXPECT_TRUE(!st[2].embeddings && st[2].output_head);
}

TEST(ParallelPlan, UnevenStagesGetTheirOwnKvAndTheNodeTheFewestBlocks) {
  const ModelSpec& s = find_model_preset(test::model_presets(), "llama-3-70b").spec;
  const ParallelPlan p = plan_parallel(request("llama-3-70b", "h100-sxm", 2, 3, 8, 2048));
  ASSERT_EQ(p.stages.size(), 3u);
  std::int64_t fewest = p.stages[0].plan.kv_blocks_per_group;
  for (const StagePlan& st : p.stages) {
    EXPECT_EQ(st.plan.kv_block_set_bytes, allocator_block_bytes(s, st.stage.n_layers, 4));
    fewest = std::min(fewest, st.plan.kv_blocks_per_group);
  }
  EXPECT_EQ(p.kv_blocks, fewest);
  EXPECT_EQ(p.kv_tokens, fewest * 16);
  // 27-layer stages have larger blocks than the 26-layer last one (which also holds the head)
  EXPECT_GT(p.stages[0].plan.kv_block_set_bytes, p.stages[2].plan.kv_block_set_bytes);
}

TEST(ParallelPlan, PerGpuPartsAddUpToTheWholeModel) {
  // Llama-2-70B over tp 4 x pp 2: no KV head is replicated (8 KV heads), so the node's KV
  // is exactly the single-GPU plan's and its weights the model's parameters (embedding and
  // head each split 4 ways), give or take the per-GPU rounding up.
  const ParallelRequest r = request("llama-2-70b", "h100-sxm", 4, 2, 3, 1000);
  const ParallelPlan p = plan_parallel(r);
  PlanRequest one = r.base;
  one.budget.total_bytes = std::int64_t{1} << 50;
  const MemoryPlan single = plan_memory(one);
  std::int64_t kv = 0, params = 0, total = 0;
  for (const StagePlan& st : p.stages) {
    kv += 4 * st.plan.kv.pool_bytes_needed;
    params += 4 * st.weight_params;
    total += 4 * st.plan.total_needed;
    EXPECT_EQ(st.plan.total_needed,
              st.plan.weights.bytes + st.plan.workspace.total() + st.plan.kv.pool_bytes_needed);
  }
  EXPECT_EQ(kv, single.kv.pool_bytes_needed);
  EXPECT_EQ(total, p.node_bytes_needed);
  EXPECT_GE(params, r.n_params - 8192);  // the final norm is spread over the layers
  EXPECT_LE(params, r.n_params + 8 * 80 * 4);
}

TEST(ParallelPlan, ATiedHeadIsStoredAgainOnTheLastStageWhenItIsNotTheFirst) {
  const ModelPreset& m = find_model_preset(test::model_presets(), "smollm2-1.7b");
  const std::int64_t table = m.spec.vocab_size * m.spec.dim;
  auto node_params = [&](std::int64_t pp) {
    std::int64_t n = 0;
    for (const StagePlan& st :
         plan_parallel(request("smollm2-1.7b", "rtx-4090", 1, pp, 1, 512)).stages) {
      n += st.weight_params;
    }
    return n;
  };
  EXPECT_EQ(node_params(2) - node_params(1), table);
}

TEST(ParallelPlan, Fp8KvHalvesEveryFp16Block) {
  ParallelRequest r = request("llama-3-70b", "h100-sxm", 4, 2, 16, 8192);
  const ParallelPlan f16 = plan_parallel(r);
  r.kv_dtype = ServingKvDtype::Fp8;
  const ParallelPlan fp8 = plan_parallel(r);
  for (std::size_t i = 0; i < f16.stages.size(); ++i) {
    EXPECT_EQ(2 * fp8.stages[i].plan.kv_block_set_bytes, f16.stages[i].plan.kv_block_set_bytes);
    EXPECT_EQ(2 * fp8.stages[i].plan.kv.pool_bytes_needed, f16.stages[i].plan.kv.pool_bytes_needed);
  }
  // the same KV memory holds about twice the tokens (the budget is the same: fp8 changes
  // neither weights nor workspace)
  EXPECT_GE(fp8.kv_tokens, 2 * f16.kv_tokens);
  EXPECT_LE(fp8.kv_tokens, 2 * f16.kv_tokens + 16);
}

TEST(ParallelPlan, Fp8IsAPlannerDtypeTheEngineCannotBeAskedFor) {
  EXPECT_EQ(parse_serving_kv_dtype("FP8_E4M3"), ServingKvDtype::Fp8);
  EXPECT_EQ(parse_serving_kv_dtype("bf16"), ServingKvDtype::Auto);
  EXPECT_THROW(parse_serving_kv_dtype("int3"), UsageError);
  EXPECT_THROW(parse_kv_dtype("fp8"), UsageError);  // the allocator's dtypes have no fp8
}

TEST(ParallelPlan, BadShapesAreClearErrors) {
  EXPECT_THAT(shape_error("llama-3-70b", {3, 1, 0}),
              HasSubstr("does not divide the model's 64 attention heads"));
  EXPECT_THAT(shape_error("llama-3-70b", {16, 1, 0}), HasSubstr("tp 16 exceeds the 8 GPUs"));
  EXPECT_THAT(shape_error("llama-3-70b", {4, 4, 0}), HasSubstr("16 GPUs, more than the node's 8"));
  EXPECT_THAT(shape_error("llama-3-70b", {4, 2, 4}), HasSubstr("8 GPUs, more than the node's 4"));
  EXPECT_THAT(shape_error("llama-3-70b", {0, 1, 0}), HasSubstr("must be >= 1"));
  EXPECT_THAT(shape_error("llama-3-70b", {1, 1, 9}), HasSubstr("1 to 8"));
}

TEST(ParallelPlan, SolversAnswerTheEdgeOfWhatPlanParallelCallsFitting) {
  const ParallelRequest r = request("llama-3-70b", "h100-sxm", 4, 1, 64, 8192);
  const std::int64_t len = parallel_max_context(r);
  ParallelRequest at = r;
  at.base.context = len;
  EXPECT_TRUE(plan_parallel(at).fits);
  at.base.context = len + 1;
  EXPECT_TRUE(len == r.base.kv.max_context || !plan_parallel(at).fits);

  const std::int64_t seqs = parallel_max_batch(r);
  ASSERT_GT(seqs, 0);
  at = r;
  at.base.batch = seqs;
  EXPECT_TRUE(plan_parallel(at).fits);
  at.base.batch = seqs + 1;
  EXPECT_FALSE(plan_parallel(at).fits);
}

TEST(ParallelPlan, SmallestNodeIsTheFirstGpuCountWithAShapeThatFits) {
  // Llama-3-70B in f16 is 141 GB of weights: not one 80 GB H100, and an answer that fits.
  const ParallelRequest r = request("llama-3-70b", "h100-sxm", 1, 1, 32, 8192);
  const std::optional<ParallelShape> s = smallest_node(r);
  ASSERT_TRUE(s.has_value());
  EXPECT_GE(s->gpus(), 2);
  ParallelRequest at = r;
  at.shape = *s;
  EXPECT_TRUE(plan_parallel(at).fits);
  for (std::int64_t gpus = 1; gpus < s->gpus(); ++gpus) {
    for (std::int64_t tp = 1; tp <= gpus; ++tp) {
      if (gpus % tp != 0) continue;
      at.shape = {tp, gpus / tp, 0};
      try {
        EXPECT_FALSE(plan_parallel(at).fits) << tp << " x " << gpus / tp;
      } catch (const UsageError&) {
      }
    }
  }
  // On an RTX 4090 (24 GiB) the whole node of 8 is not enough at this batch and context.
  EXPECT_FALSE(smallest_node(request("llama-3-70b", "rtx-4090", 1, 1, 256, 8192)).has_value());
}

TEST(ParallelPlan, SwapSpaceHoldsTheBlocksOfThePreemptedSequences) {
  const ParallelPlan p = plan_parallel(request("llama-3-70b", "h100-sxm", 4, 1, 8, 4096));
  const ModelSpec& s = find_model_preset(test::model_presets(), "llama-3-70b").spec;
  // 10 sequences of 4,000 tokens: ceil(4000 / 16) = 250 blocks each, 2 KV heads per GPU
  EXPECT_EQ(swap_bytes_per_gpu(p, 10, 4000), 10 * 250 * allocator_block_bytes(s, 80, 2));
  EXPECT_EQ(swap_bytes_per_gpu(p, 0, 4000), 0);
  EXPECT_THROW(swap_bytes_per_gpu(p, -1, 4000), UsageError);
  EXPECT_EQ(allocator_block_bytes(s, 80, 2), std::int64_t{16} * 80 * 2 * 2 * 128 * 2);
}

}  // namespace
}  // namespace kvscope
