// The CUDA backend's workspace as the planner counts it (plan/cuda_workspace.h): the buffers
// CudaBackend reserves step by step, each at its largest over the steps a batch and a chunk
// allow, the buffers every step shares, and the plan's workspace built from exactly them.
// The backend sizes its buffers with cuda_step_buffers itself (kernels/backend), and
// tests/kernels check the shapes it passes (step tables, splits, slabs) against these rules.
#include "plan/cuda_workspace.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"
#include "plan/memory_model.h"
#include "plan/solvers.h"

namespace kvscope {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

const ModelSpec& preset(const char* slug) {
  return find_model_preset(test::model_presets(), slug).spec;
}

std::int64_t bytes_of(const std::vector<CudaBuffer>& list, std::string_view what) {
  for (const CudaBuffer& b : list) {
    if (b.what == what) return b.bytes;
  }
  ADD_FAILURE() << "no buffer " << what;
  return -1;
}

TEST(CudaWorkspace, AStepHasTheBackendsBuffersInItsOrder) {
  const ModelSpec& s = preset("llama-2-7b");
  CudaStepShape shape;
  shape.n_tokens = 512;
  shape.n_rows = 1;
  const auto list = cuda_step_buffers(s, {}, shape);
  std::vector<std::string_view> names;
  for (const CudaBuffer& b : list) names.push_back(b.what);
  EXPECT_EQ(names,
            (std::vector<std::string_view>{
                "activations x", "activations xb", "activations q, k, v", "attention output",
                "ffn gate and up", "final hidden states", "logits", "attention split partials",
                "KV quantization error sums", "8-bit activation codes", "8-bit activation scales",
                "fp16 activations for cuBLAS", "step tables", "greedy picks"}));
  EXPECT_EQ(bytes_of(list, "activations q, k, v"), 512 * (4096 + 2 * 4096) * 4);
  EXPECT_EQ(bytes_of(list, "ffn gate and up"), 2 * 512 * 11008 * 4);
  EXPECT_EQ(bytes_of(list, "logits"), 32000 * 4);
  // 512 tokens take cuBLAS (gemm_min_tokens 8): fp16 inputs of the widest projection, and
  // the one logits row takes 8-bit codes
  EXPECT_EQ(bytes_of(list, "fp16 activations for cuBLAS"), 512 * 11008 * 2);
  EXPECT_EQ(bytes_of(list, "8-bit activation codes"), 1 * 11008);
  EXPECT_EQ(bytes_of(list, "8-bit activation scales"), 11008 / 32 * 4);
  EXPECT_EQ(bytes_of(list, "step tables"), (2 * 512 + 1 + 2 * 512 + 16) * 4);
  EXPECT_EQ(bytes_of(list, "attention split partials"), 4);  // one split: a placeholder float
}

TEST(CudaWorkspace, SharedBuffersAreRopeTablesTheCublasWorkspaceAndTheWeightSlab) {
  const ModelSpec& s = preset("llama-2-7b");
  CudaWorkspaceOptions o;
  auto list = cuda_fixed_buffers(s, o, 4096);
  EXPECT_EQ(bytes_of(list, "RoPE cos table"), 4096 * 64 * 4);
  EXPECT_EQ(bytes_of(list, "RoPE cos table (sliding layers)"), 0);  // one RoPE for all
  EXPECT_EQ(bytes_of(list, "cuBLAS workspace"), 32 * kMiB);
  // the largest projection, 32000 x 4096 output, has more than 64 MiB of fp16: the slab is
  // the rows that fit
  EXPECT_EQ(bytes_of(list, "fp16 weight slab for cuBLAS"), 64 * kMiB / (4096 * 2) * 4096 * 2);
  o.compute_major = 8;
  o.gemm_slab_bytes = 0;  // every matrix F16: read in place
  list = cuda_fixed_buffers(s, o, 4096);
  EXPECT_EQ(bytes_of(list, "cuBLAS workspace"), 4 * kMiB);
  EXPECT_EQ(bytes_of(list, "fp16 weight slab for cuBLAS"), 0);
  o.gemm_min_tokens = 0;  // no cuBLAS at all
  EXPECT_EQ(bytes_of(cuda_fixed_buffers(s, o, 4096), "cuBLAS workspace"), 0);

  // Gemma 3: the sliding layers turn by base 10,000, the global ones by 1,000,000
  ModelSpec gemma = s;
  gemma.sliding_window = 512;
  gemma.sliding_window_period = 6;
  gemma.rope_theta = 1e6;
  gemma.rope_theta_local = 1e4;
  EXPECT_EQ(bytes_of(cuda_fixed_buffers(gemma, o, 4096), "RoPE sin table (sliding layers)"),
            4096 * 64 * 4);
}

// The steps an engine can run with this batch and chunk: prompt chunks of any length up to
// the chunk (the last one shorter) splitting by their keys, and decode steps of every batch
// size up to the batch keeping room for their most splits.
std::vector<CudaStepShape> engine_steps(const ModelSpec& s, const CudaWorkspaceOptions& o,
                                        std::int64_t batch, std::int64_t chunk,
                                        std::int64_t positions, std::int64_t capacity) {
  std::vector<CudaStepShape> out;
  const auto splits = [&](std::int64_t t, std::int64_t keys) {
    return cuda_attention_splits(static_cast<int>(t), static_cast<int>(s.n_heads),
                                 static_cast<int>(s.n_kv_heads), keys, o.sm_count);
  };
  for (std::int64_t t = 1; t <= std::max(batch, chunk); ++t) {
    CudaStepShape shape;
    shape.n_tokens = t;
    shape.n_rows = std::min(t, batch);
    shape.blocks_capacity = capacity;
    for (std::int64_t keys = 1; keys <= positions; keys *= 2) {
      shape.n_splits = splits(t, keys);
      out.push_back(shape);
    }
    shape.n_splits = splits(t, positions);
    out.push_back(shape);
    if (t <= batch) {
      shape.n_splits = splits(t, std::int64_t{1} << 40);
      out.push_back(shape);
    }
  }
  return out;
}

TEST(CudaWorkspace, ThePlanHoldsEveryBufferAtItsLargestOverTheSteps) {
  for (const char* slug : {"llama-2-7b", "smollm2-135m"}) {
    const ModelSpec& s = preset(slug);
    for (const std::int64_t batch : {1, 3, 64}) {
      for (const std::int64_t chunk : {1, 7, 512}) {
        CudaWorkspaceOptions o;
        o.sm_count = 46;
        CudaWorkspaceRequest r;
        r.max_step_tokens = std::max(batch, chunk);
        r.max_sequences = batch;
        r.logits_rows = batch;
        r.max_positions = 2048;
        const auto plan = cuda_workspace_buffers(s, o, r);
        const std::int64_t capacity = plan[12].bytes / 4 - (2 * r.max_step_tokens + batch) -
                                      2 * r.max_step_tokens;  // the plan's table capacity
        EXPECT_GE(capacity, batch * 2048 / 16);
        std::vector<std::int64_t> most(14, 0);
        for (const CudaStepShape& step : engine_steps(s, o, batch, chunk, 2048, capacity)) {
          const auto list = cuda_step_buffers(s, o, step);
          for (std::size_t i = 0; i < list.size(); ++i) most[i] = std::max(most[i], list[i].bytes);
        }
        for (std::size_t i = 0; i < most.size(); ++i) {
          EXPECT_EQ(plan[i].bytes, most[i])
              << slug << " batch " << batch << " chunk " << chunk << ": " << plan[i].what;
        }
        EXPECT_EQ(plan.size(), most.size() + cuda_fixed_buffers(s, o, 2048).size());
      }
    }
  }
}

TEST(CudaWorkspace, ThePlansWorkspaceIsTheBuffersAndTheContextEstimate) {
  PlanRequest r = make_plan_request(preset("smollm2-135m"), {}, KvDtype::F16, KvDtype::F16);
  r.batch = 4;
  r.prefill_chunk = 256;
  r.context = 1024;
  r.budget.total_bytes = std::int64_t{8} << 30;
  r.cuda.compute_major = 8;
  r.cuda.sm_count = 46;
  const MemoryPlan p = plan_memory(r);
  KvCacheConfig engine_kv = r.kv;  // an engine started for the plan's context
  engine_kv.max_context = r.context;
  const auto list = cuda_plan_buffers(r.spec, r.batch, r.prefill_chunk, engine_kv, r.cuda);
  EXPECT_EQ(p.workspace.activations + p.workspace.logits + p.workspace.buffers, total_bytes(list));
  EXPECT_EQ(p.workspace.logits, 4 * r.spec.vocab_size * 4);
  EXPECT_EQ(p.workspace.backend, backend_overhead_bytes(PlanBackend::Cuda));
  // RoPE tables for the plan's context (an engine started for it), not the model's 8,192
  EXPECT_EQ(p.workspace.buffers, 2 * r.context * (r.spec.rope_dim / 2) * 4 + 4 * kMiB +
                                     bytes_of(list, "fp16 weight slab for cuBLAS"));
  // the CPU plan keeps its own estimate and no buffers
  r.backend = PlanBackend::Cpu;
  EXPECT_EQ(plan_memory(r).workspace.buffers, 0);
}

// The RoPE and block tables hold the positions of the engine the plan describes: one started
// for the plan's context by default, an engine's own context when the request gives it
// (check_plan), so a long-context model planned at a short context is not charged for the
// tables of positions it will never reach (Llama 3.1 8B: 64 MiB at 131,072, 4 MiB at 8,192).
TEST(CudaWorkspace, TheRopeTablesHoldTheEnginesPositions) {
  PlanRequest r = make_plan_request(preset("llama-3.1-8b"), {}, KvDtype::F16, KvDtype::F16);
  r.budget.total_bytes = std::int64_t{24} << 30;
  const std::int64_t per_position = 2 * (r.spec.rope_dim / 2) * 4;  // cos and sin, f32
  const auto rope = [&](const MemoryPlan& p) {
    return p.workspace.buffers - cublas_workspace_bytes(r.cuda.compute_major) -
           cuda_gemm_slab_bytes(r.spec.vocab_size, r.spec.dim);
  };
  r.context = 8192;
  EXPECT_EQ(rope(plan_memory(r)), 8192 * per_position);
  r.engine_context = 131'072;  // an engine running at the model's whole context
  EXPECT_EQ(rope(plan_memory(r)), 131'072 * per_position);
  EXPECT_EQ(plan_engine_context(r), 131'072);
  // the longest context a budget allows counts the tables at each length it tries
  r.engine_context = 0;
  r.budget.total_bytes = std::int64_t{8} << 30;
  const std::int64_t longest = max_context(r).tokens;
  r.context = longest;
  EXPECT_TRUE(plan_memory(r).fits);
  r.context = longest + 1;
  EXPECT_FALSE(plan_memory(r).fits);
}

// A GPU's compute capability sets the cuBLAS workspace the plan counts: 4 MiB before sm_90
// (every RTX 30 and 40), 32 MiB from it; a GPU the plan knows nothing of gets 32.
TEST(CudaWorkspace, TheCublasWorkspaceIsTheGpusOwn) {
  PlanRequest r = make_plan_request(preset("llama-3.1-8b"), {}, KvDtype::F16, KvDtype::F16);
  r.context = 4096;
  r.budget.total_bytes = std::int64_t{8} << 30;
  const std::int64_t unknown = plan_memory(r).workspace.buffers;
  r.cuda.compute_major = 8;
  EXPECT_EQ(unknown - plan_memory(r).workspace.buffers, 28 * kMiB);
}

TEST(CudaWorkspace, AllLogitsRowsAreCountedWhenAsked) {
  // perplexity asks every token of a chunk for its logits: 512 rows of a 152k vocab
  ModelSpec s = preset("smollm2-135m");
  s.vocab_size = 151'936;
  CudaWorkspaceRequest r;
  r.max_step_tokens = 512;
  r.logits_rows = 512;
  EXPECT_EQ(bytes_of(cuda_workspace_buffers(s, {}, r), "logits"), 512 * 151'936 * 4);
}

TEST(CudaWorkspace, SplitsFillThreeCtasPerSmInOneWaveWithAtLeast64KeysEach) {
  EXPECT_EQ(cuda_attention_splits(1, 32, 8, 16384, 132), 49);
  EXPECT_EQ(cuda_attention_splits(1, 32, 8, 1024, 132), 16);
  EXPECT_EQ(cuda_attention_splits(1, 4, 1, std::int64_t{1} << 20, 132), 128);
  EXPECT_EQ(cuda_attention_splits(512, 32, 8, 4096, 132), 1);
  EXPECT_EQ(cuda_attention_partial_floats(2, 32, 128, 50), 2 * 32 * 50 * 130);
  EXPECT_EQ(cuda_attention_partial_floats(2, 32, 128, 1), 0);
  EXPECT_EQ(cuda_gemm_slab_rows(32000, 4096), 8192);
  EXPECT_EQ(cuda_gemm_slab_rows(10, 4096), 10);
  EXPECT_EQ(cuda_gemm_slab_rows(10, std::int64_t{1} << 30), 1);
}

}  // namespace
}  // namespace kvscope
