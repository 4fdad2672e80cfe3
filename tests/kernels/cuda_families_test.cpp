// Qwen 3, Gemma 3 and Gemma 2 on the CUDA decoder against the CPU one: q/k norms,
// post-norms, the GELU gate, scaled embeddings, the sliding layers' own RoPE and window (6
// tokens here, so a 40-token prompt drops keys in every sliding layer), MQA, soft-capped
// scores and logits. Tiny random-weight files written
// by the engine's synthetic writer; the CPU decoder is the reference (it agrees with
// llama.cpp on these families: tests/engine/run/llama_cpp_families_test.cpp).
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cuda_factory.h"
#include "kernel_test_support.h"
#include "model/synthetic_model.h"
#include "run/engine.h"
#include "support/test_data.h"

namespace kvscope {
namespace {

// gemm_min_tokens 0: every projection through the matvec kernels; q8 off: f32 activations.
EngineOptions options(BackendChoice backend, std::int64_t gemm_min_tokens = 0,
                      bool q8_activations = false, std::int64_t chunk = 512) {
  EngineOptions o;
  o.backend = backend;
  o.n_threads = 1;
  o.context_length = 128;
  o.q8_activations = false;  // the CPU's float reference
  o.scheduler.max_batch_tokens = chunk;
  CudaBackendOptions c;
  c.gemm_min_tokens = gemm_min_tokens;
  c.q8_activations = q8_activations;
  o.cuda_factory = cuda_backend_factory(c);
  return o;
}

using FamilyCase = std::tuple<std::string, TensorType>;

class CudaFamiliesTest : public ::testing::TestWithParam<FamilyCase> {};

TEST_P(CudaFamiliesTest, PromptAndSingleTokenStepsAgreeWithTheCpuDecoder) {
  KVSCOPE_REQUIRE_CUDA();
  const auto& [architecture, type] = GetParam();
  const ModelSpec spec = test::tiny_family_spec(architecture);
  const std::string path = (test::scratch_dir() / ("cuda-" + architecture + "-" +
                                                   std::string(tensor_type_name(type)) + ".gguf"))
                               .string();
  write_synthetic_gguf(path, spec, type, 17);
  std::vector<TokenId> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(1 + (i * 37) % 300);
  const std::string what = architecture + ", " + std::string(tensor_type_name(type));
  // This tiny gemma3 (7 layers, each sub-layer's output normalised, embeddings times 11) turns
  // the last bits of f32 sums into up to 2.6e-3 of logit (RMS 0.58): the CPU's own float and
  // exact paths differ that much on the f32 file, the device 4.1e-3 from either (RMS 7e-4).
  const float abs = architecture == "qwen3" ? 2e-3f : 5e-3f;

  // The CPU's float attention for f32 weights (its 8-bit codes touch no f32 matrix), its exact
  // path for quantized ones, whose fp16 queries (llama.cpp's attention order) move these q/k-
  // normed scores by a few 1e-3 from the device's f32 ones.
  EngineOptions cpu = options(BackendChoice::Cpu);
  cpu.q8_activations = type == TensorType::F32;
  const std::vector<float> want = Engine(path, cpu).evaluate(prompt);
  Engine matvec(path, options(BackendChoice::Cuda));
  ASSERT_FALSE(matvec.backend().uses_host_kv_storage()) << matvec.backend_note();
  test::expect_close(matvec.evaluate(prompt), want, abs, 1e-2f, "prompt logits, " + what);
  // one token a step: the stacked q|k|v and gate|up projections, decode's shape
  test::expect_close(Engine(path, options(BackendChoice::Cuda, 0, false, 1)).evaluate(prompt), want,
                     abs, 1e-2f, "single-token steps, " + what);
  // cuBLAS: activations rounded to fp16 before every projection
  test::expect_close(Engine(path, options(BackendChoice::Cuda, 1)).evaluate(prompt), want,
                     abs + 3e-3f, 2e-2f, "prompt logits (cuBLAS), " + what);
  if (type != TensorType::F32) {  // 8-bit activation codes for the quantized projections
    test::expect_q8_logits_close(
        Engine(path, options(BackendChoice::Cuda, 0, true, 1)).evaluate(prompt), want,
        static_cast<std::size_t>(spec.vocab_size), "8-bit activations, " + what);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Families, CudaFamiliesTest,
    ::testing::Values(FamilyCase{"qwen3", TensorType::F32}, FamilyCase{"qwen3", TensorType::Q8_0},
                      FamilyCase{"gemma3", TensorType::F32}, FamilyCase{"gemma3", TensorType::Q8_0},
                      FamilyCase{"gemma3", TensorType::Q5_0}, FamilyCase{"gemma2", TensorType::F32},
                      FamilyCase{"gemma2", TensorType::Q8_0}),
    [](const auto& p) {
      return std::get<0>(p.param) + "_" + std::string(tensor_type_name(std::get<1>(p.param)));
    });

// Greedy decoding through the engine (decode steps as CUDA graphs) picks the CPU's tokens.
TEST(CudaFamilies, Gemma3GreedyDecodePicksTheCpuTokens) {
  KVSCOPE_REQUIRE_CUDA();
  const std::string path = (test::scratch_dir() / "cuda-gemma3-greedy.gguf").string();
  write_synthetic_gguf(path, test::tiny_family_spec("gemma3"), TensorType::F32, 23);
  GenerationRequest r;
  for (int i = 0; i < 20; ++i) r.prompt.push_back(3 + (i * 53) % 300);
  r.max_tokens = 24;
  r.sampling.temperature = 0;
  const RequestResult cpu = Engine(path, options(BackendChoice::Cpu)).generate(r);
  const RequestResult cuda = Engine(path, options(BackendChoice::Cuda)).generate(r);
  EXPECT_EQ(cuda.generated, cpu.generated);
}

}  // namespace
}  // namespace kvscope
