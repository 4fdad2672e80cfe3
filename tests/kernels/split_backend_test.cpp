// A model split between the GPU and the CPU (run/split_backend.h): layers [0, k) on the CUDA
// backend, [k, n) on the CPU, the KV cache's groups per side. At every layer boundary k the
// greedy ids follow the all-CPU run step by step, up to the first step where the CPU's own
// choice is close (its top two within 0.05 nats): the GPU's layers differ from the CPU's
// only by summation order and 8-bit activation rounding (cuda_cache_formats_test.cpp says
// why such steps may flip). The output head runs on the CPU in both runs.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cuda_factory.h"
#include "kernel_test_support.h"
#include "kv/kv_cache_manager.h"
#include "model/model.h"
#include "plan/layer_split_plan.h"
#include "plan/model_layer_groups.h"
#include "run/engine.h"
#include "run/layer_split.h"
#include "run/split_backend.h"
#include "split_test_support.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

using test::split_options;

// Gemma-3-like groups (layers 0-4, 6-10 slide, 5 and 11 see everything) split after layer 7:
// the GPU's part of each group first, marked on_device, then the CPU's; the manager keeps
// host bytes for the CPU's groups only, and a sequence grows in all four.
TEST(SplitLayerGroups, EachSideGetsItsOwnGroupsAndOnlyTheCpusAreInHostMemory) {
  const std::vector<LayerGroupConfig> model = {
      {{0, 1, 2, 3, 4, 6, 7, 8, 9, 10}, KvDtype::F16, KvDtype::F16, 512},
      {{5, 11}, KvDtype::Int8, KvDtype::Int8, 0}};
  const std::vector<LayerGroupConfig> split = split_layer_groups(model, 8);
  ASSERT_EQ(split.size(), 4u);
  EXPECT_EQ(split[0].layers, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 6, 7}));
  EXPECT_EQ(split[1].layers, (std::vector<std::int64_t>{5}));
  EXPECT_EQ(split[2].layers, (std::vector<std::int64_t>{8, 9, 10}));
  EXPECT_EQ(split[3].layers, (std::vector<std::int64_t>{11}));
  EXPECT_TRUE(split[0].on_device && split[1].on_device);
  EXPECT_FALSE(split[2].on_device || split[3].on_device);
  EXPECT_EQ(split[0].window, 512);
  EXPECT_EQ(split[3].k_dtype, KvDtype::Int8);
  EXPECT_EQ(split_layer_groups(model, 12).size(), 2u);  // all on the GPU: no CPU groups

  KvCacheConfig c;
  c.groups = split;
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.max_context = 1024;
  c.n_blocks = 8;
  KvCacheManager kv(c);
  EXPECT_FALSE(kv.bytes().has_host_storage(0));
  EXPECT_FALSE(kv.bytes().has_host_storage(1));
  EXPECT_TRUE(kv.bytes().has_host_storage(2));
  EXPECT_TRUE(kv.bytes().has_host_storage(3));
  EXPECT_THROW((void)kv.bytes().block_data(0, 0), UsageError);
  kv.add_sequence(1);
  kv.grow(1, 20);
  for (std::int64_t g = 0; g < kv.n_groups(); ++g) EXPECT_EQ(kv.usage(g).n_used, 2) << g;
}

constexpr float kClearMargin = 0.05f;  // nats between the CPU's top two tokens

struct Greedy {
  std::vector<TokenId> ids;
  std::vector<float> margins;  // the CPU's top-2 log-probability gap per step
};

Greedy greedy(Engine& engine, const std::vector<TokenId>& prompt, int n) {
  GenerationRequest r;
  r.prompt = prompt;
  r.max_tokens = n;
  r.sampling.temperature = 0;
  r.top_logprobs = 2;
  r.stop_at_end_of_generation = false;  // n steps each, compared one by one
  Greedy g;
  g.ids = engine
              .generate(r,
                        [&](const TokenEvent& e) {
                          if (e.top.size() == 2)
                            g.margins.push_back(e.top[0].second - e.top[1].second);
                        })
              .generated;
  return g;
}

// The split at each of `boundaries` against the all-CPU run; returns the steps compared.
void expect_split_follows_cpu(const std::string& model, const std::vector<TokenId>& prompt, int n,
                              const std::vector<std::int64_t>& boundaries) {
  Engine cpu(model, split_options(0));
  const Greedy want = greedy(cpu, prompt, n);
  ASSERT_EQ(want.margins.size(), want.ids.size());
  ASSERT_GT(want.margins.front(), kClearMargin) << "the first step's choice must be clear";
  for (const std::int64_t k : boundaries) {
    Engine split(model, split_options(k));
    const auto* backend = dynamic_cast<const SplitBackend*>(&split.backend());
    ASSERT_NE(backend, nullptr) << split.backend().name() << " " << split.backend_note();
    ASSERT_EQ(backend->gpu_layers(), k);
    const Greedy got = greedy(split, prompt, n);
    ASSERT_EQ(got.ids.size(), want.ids.size()) << "split at " << k;
    for (std::size_t i = 0; i < want.ids.size(); ++i) {
      if (got.ids[i] == want.ids[i]) continue;
      EXPECT_LE(want.margins[i], kClearMargin)
          << "split at layer " << k << ": step " << i << " picks " << got.ids[i] << ", the CPU "
          << want.ids[i] << " with a margin of " << want.margins[i] << " nats";
      break;  // the two continuations differ from here on
    }
  }
}

TEST(SplitBackend, StoriesGreedyIdsFollowTheCpuAtEveryLayerBoundary) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine cpu(model, split_options(0));
  const std::vector<TokenId> prompt = cpu.tokenize("Once upon a time, there was a", true);
  std::vector<std::int64_t> boundaries;
  for (std::int64_t k = 1; k < cpu.spec().n_layers; ++k) boundaries.push_back(k);
  expect_split_follows_cpu(model, prompt, 24, boundaries);
}

// 30 layers under the emulation: every boundary would take minutes, so the first, the last
// and a few between (each GPU layer count's code path is the same loop; what changes is how
// many layers' rounding the CPU's tail sees).
TEST(SplitBackend, SmolLm2GreedyIdsFollowTheCpuAcrossLayerBoundaries) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(model, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  Engine cpu(model, split_options(0));
  const std::vector<TokenId> prompt = cpu.tokenize("The capital of France is", true);
  std::vector<std::int64_t> boundaries;
  for (std::int64_t k = 1; k < cpu.spec().n_layers; ++k) boundaries.push_back(k);
  boundaries = test::device_or_emulated(boundaries, std::vector<std::int64_t>{1, 10, 29});
  expect_split_follows_cpu(model, prompt, 6, boundaries);
}

// A kept prefix shared by a second request across the split: its partly filled tail block is
// copied on write in the GPU's groups (the CUDA backend's copy_blocks) and in the CPU's (the
// manager's host storage), and the second request's greedy ids are the all-CPU engine's.
TEST(SplitBackend, AKeptPrefixIsSharedAndCopiedOnWriteOnBothSides) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  std::vector<std::vector<TokenId>> got;
  std::int64_t reused = 0;
  for (const std::int64_t k : {std::int64_t{0}, std::int64_t{2}}) {
    EngineOptions o = split_options(k);
    o.block_size = 4;  // the 7-token prefix ends inside a block
    Engine engine(model, o);
    GenerationRequest first;
    first.prompt = engine.tokenize("Once upon a time", true);
    first.max_tokens = 3;
    first.sampling.temperature = 0;
    first.keep_cache = true;
    const RequestResult a = engine.generate(first);
    GenerationRequest second = first;
    second.keep_cache = false;
    second.prompt.insert(second.prompt.end(), a.generated.begin(), a.generated.end());
    const std::vector<TokenId> more = engine.tokenize(" there was a", false);
    second.prompt.insert(second.prompt.end(), more.begin(), more.end());
    second.max_tokens = 12;
    const RequestResult b = engine.generate(second);
    if (k > 0) reused = b.reused_tokens;
    got.push_back(b.generated);
  }
  EXPECT_GT(reused, 0) << "the second request should reuse the kept prefix";
  EXPECT_EQ(got[1], got[0]);
}

// Two requests that do not fit the pool together: one is preempted and recomputed, on the
// GPU's groups and the CPU's alike, and both get the all-CPU engine's greedy ids.
TEST(SplitBackend, APreemptedSequenceIsRecomputedOnBothSides) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  std::vector<std::vector<std::vector<TokenId>>> got(2);
  std::int64_t recomputed = 0;
  const ModelSpec spec = load_model(model)->spec();
  // 6 blocks of 16 tokens in every group; each request grows to 4 blocks
  const std::int64_t block_bytes = 2 * spec.n_layers * spec.kv_dim() * 16 * 2;
  for (const std::int64_t k : {std::int64_t{0}, std::int64_t{3}}) {
    EngineOptions o = split_options(k);
    o.kv_budget_bytes = static_cast<std::uint64_t>(6 * block_bytes);
    Engine small(model, o);
    ASSERT_EQ(small.kv_cache().pool(0).n_blocks(), 6);
    std::vector<RequestResult> results(2);
    for (int i = 0; i < 2; ++i) {
      GenerationRequest r;
      r.prompt = small.tokenize(i == 0 ? "Once upon a time" : "The little dog", true);
      r.max_tokens = 50;
      r.sampling.temperature = 0;
      r.stop_at_end_of_generation = false;
      RequestCallbacks cb;
      cb.on_finish = [&results, i](const RequestResult& res) { results[i] = res; };
      small.submit(std::move(r), std::move(cb));
    }
    while (small.step()) {
    }
    for (const RequestResult& res : results) {
      got[static_cast<std::size_t>(k > 0)].push_back(res.generated);
      if (k > 0) recomputed += res.recomputed_tokens;
    }
  }
  EXPECT_GT(recomputed, 0) << "the pool should have preempted a sequence";
  EXPECT_EQ(got[1], got[0]);
}

// --gpu-layers auto under a memory budget: the planner (plan/layer_split_plan.h) and the
// engine agree on the layer count, and each side allocates exactly the plan's weights and KV
// pools; the default (all) does the same where the whole model leaves no room for KV. The budget is
// chosen so that 15 of SmolLM2's 30 layers fit with a 1,024-token context.
TEST(SplitBackend, AutoUnderAMemoryBudgetAllocatesWhatThePlanSaysOnEachSide) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(path, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  EngineOptions o = split_options(EngineOptions::kAutoGpuLayers);
  o.kv_budget_bytes = 0;
  o.context_length = 1024;
  const std::unique_ptr<Model> model = load_model(path);
  o.memory_budget_bytes = test::budget_for_gpu_layers(*model, o, 15);
  const LayerSplitRequest r =
      layer_split_request(*model, o, gpu_memory_budget(o, 0, 0), test::device_plan_options());
  const LayerSplitPlan plan = plan_layer_split(r);
  ASSERT_EQ(plan.gpu_layers, 15);
  ASSERT_EQ(auto_gpu_layers(*model, o, gpu_memory_budget(o, 0, 0), test::device_plan_options()),
            15);

  Engine engine(path, o);
  const auto* split = dynamic_cast<const SplitBackend*>(&engine.backend());
  ASSERT_NE(split, nullptr) << engine.backend().name() << " " << engine.backend_note();
  EXPECT_EQ(split->gpu_layers(), 15);
  GenerationRequest g;
  g.prompt = engine.tokenize("Hi", true);
  g.max_tokens = 1;
  (void)engine.generate(g);  // the GPU's pools are allocated at the first step
  const MemoryInfo gpu = split->gpu_memory_info(engine.kv_cache());
  const MemoryInfo cpu = split->cpu_memory_info(engine.kv_cache());
  EXPECT_EQ(static_cast<std::int64_t>(gpu.weights), plan.gpu.weights);
  EXPECT_EQ(static_cast<std::int64_t>(gpu.kv_pool), plan.gpu.kv_pool);
  EXPECT_EQ(static_cast<std::int64_t>(cpu.weights), plan.cpu.weights);
  EXPECT_EQ(static_cast<std::int64_t>(cpu.kv_pool), plan.cpu.kv_pool);
  EXPECT_EQ(engine.kv_cache().pool(0).n_blocks(), plan.kv_blocks_per_group);
  EXPECT_GE(plan.kv_blocks_per_group * 16, o.context_length);

  // the default (all layers) where the whole model leaves no room for KV: as auto, and says so
  o.gpu_layers = EngineOptions::kAllGpuLayers;
  Engine by_default(path, o);
  const auto* split_by_default = dynamic_cast<const SplitBackend*>(&by_default.backend());
  ASSERT_NE(split_by_default, nullptr) << by_default.backend().name();
  EXPECT_EQ(split_by_default->gpu_layers(), 15);
  EXPECT_NE(by_default.backend_note().find("does not fit the GPU: 15 of 30 layers"),
            std::string::npos)
      << by_default.backend_note();
}

}  // namespace
}  // namespace kvscope
