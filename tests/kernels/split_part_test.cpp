// The GPU's part of a split (run/split_backend.h) computes no logits: the CPU does, after the
// last layer. Its steps are planned without logits rows, so it reserves no logits
// [rows][vocab], final hidden states or greedy picks (196 KiB a row for SmolLM2's vocabulary
// of 49,152), and the planner's GPU side (plan_layer_split) leaves them out as well.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cuda_backend.h"
#include "backend/step_plan.h"
#include "kernel_test_support.h"
#include "kv/kv_cache_manager.h"
#include "plan/cuda_workspace.h"
#include "plan/layer_split_plan.h"
#include "plan/memory_model.h"
#include "plan/model_layer_groups.h"
#include "run/engine.h"
#include "run/split_backend.h"
#include "split_test_support.h"
#include "support/test_data.h"
#include "workspace_test_support.h"

namespace kvscope {
namespace {

// A part's step packs tokens, positions and block tables but no logit rows: the tables take
// the ints the planner counts for a step of no rows.
TEST(CudaStepPlan, APartBeforeTheModelsEndPlansNoLogitRows) {
  KvCacheConfig c;
  c.groups = split_layer_groups(uniform_layer_groups(4, KvDtype::F16), 2);
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.block_size = 4;
  c.max_context = 64;
  c.n_blocks = 16;
  KvCacheManager kv(c);
  kv.add_sequence(1);
  kv.grow(1, 5);
  const std::vector<TokenId> tokens = {3, 4, 5, 6, 7};
  const SequenceChunk chunk{1, tokens, 0, true};
  const cuda::StepPlan whole = cuda::plan_step({&chunk, 1}, kv, 100, 64);
  const cuda::StepPlan part = cuda::plan_step({&chunk, 1}, kv, 100, 64, 0, false);
  EXPECT_EQ(whole.n_rows, 5);
  EXPECT_EQ(part.n_rows, 0);
  EXPECT_EQ(part.n_tokens, 5);
  EXPECT_EQ(part.ints.size() + 5, whole.ints.size());
  CudaStepShape shape;
  shape.n_tokens = 5;
  shape.n_rows = 0;
  shape.n_groups = kv.n_groups();
  shape.blocks_capacity = part.blocks_capacity;
  EXPECT_EQ(static_cast<std::int64_t>(part.ints.size()), cuda_step_table_ints(shape));
  // everything but the rows is where it was
  EXPECT_EQ(std::vector<int>(part.ints.begin(), part.ints.begin() + 10),
            std::vector<int>(whole.ints.begin(), whole.ints.begin() + 10));
}

// SmolLM2 with its first layer on the GPU, after a prompt of a full chunk and a 7-token one
// and a few decode steps: the GPU's workspace is cuda_step_buffers of those steps with no
// rows, plus the shared buffers, byte for byte (no logits, final hidden states or picks); the
// planner's GPU side holds that, and is one row of each less than the whole model's.
TEST(SplitBackend, TheGpuPartReservesNoLogitsAndThePlanLeavesThemOut) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(path, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  constexpr std::int64_t kChunk = 32;
  EngineOptions o = test::split_options(1);
  o.scheduler.max_batch_tokens = kChunk;
  Engine engine(path, o);
  const auto* split = dynamic_cast<const SplitBackend*>(&engine.backend());
  ASSERT_NE(split, nullptr) << engine.backend().name() << " " << engine.backend_note();
  const auto* cuda = dynamic_cast<const CudaBackend*>(&split->gpu());
  ASSERT_NE(cuda, nullptr) << split->gpu().name();
  test::run_chunk_then_decode(engine, kChunk);

  const ModelSpec& spec = engine.spec();
  const std::vector<CudaBuffer> most =
      test::chunk_then_decode_buffers(spec, cuda->workspace_options(), kChunk, 0,
                                      engine.kv_cache().n_groups(), engine.context_length());
  const MemoryInfo gpu = split->gpu_memory_info(engine.kv_cache());
  EXPECT_EQ(static_cast<std::int64_t>(gpu.workspace), total_bytes(most));

  const LayerSplitRequest r = layer_split_request(engine.model(), o, gpu_memory_budget(o, 0, 0),
                                                  *cuda->cuda_plan_options());
  const Workspace part = split_gpu_workspace(r.plan, 1);
  const Workspace whole = split_gpu_workspace(r.plan, spec.n_layers);
  EXPECT_EQ(part.logits, 0);
  // the whole model's rows (logits, final hidden state, pick, a table int) and its output
  // head's fp16 slab, which the part leaves out; the part's step tables carry the CPU's
  // layer group too (a chunk's first and table-start ints, 16 block slots for 128 tokens)
  const std::int64_t cpu_group_tables = (2 * kChunk + 16) * 4;
  EXPECT_EQ(whole.total() - part.total(), (spec.vocab_size + spec.dim + 2) * 4 +
                                              cuda_gemm_slab_bytes(spec.vocab_size, spec.dim) -
                                              cuda_layer_slab_bytes(spec) - cpu_group_tables);
  EXPECT_GE(part.total() - backend_overhead_bytes(PlanBackend::Cuda), total_bytes(most));
}

}  // namespace
}  // namespace kvscope
