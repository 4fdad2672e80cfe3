// The whole CUDA decoder against the CPU decoder on random-weight models with the layer
// shapes of real models (TinyLlama-1.1B, Llama-3-8B from resources/presets: dim, heads, KV
// heads, head_dim, FFN), two layers and a 512-token vocabulary so the files stay small:
// prompt logits close and greedy continuations identical, for the weight types users run
// (with 8-bit activation codes: logits within their rounding, clear greedy picks the same).
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "../engine/plan/preset_files.h"
#include "backend/cuda_backend.h"
#include "backend/cuda_factory.h"
#include "kernel_test_support.h"
#include "model/synthetic_model.h"
#include "plan/kv_footprint.h"
#include "run/cpu_backend.h"
#include "run/engine.h"
#include "support/test_data.h"

namespace kvscope {
namespace {

using ShapeCase = std::tuple<const char*, TensorType>;

EngineOptions options_for(const std::string& backend, std::int64_t gemm_min_tokens = 0,
                          bool q8_activations = false) {
  EngineOptions o;
  o.backend = parse_backend_choice(backend);
  o.n_threads = 0;
  o.context_length = 256;
  // 2 layers x 256 tokens need at most 4 MiB; three CUDA engines at once must fit a 2 GiB
  // emulated device with the Llama-3-8B shapes' weights
  o.kv_budget_bytes = std::uint64_t{32} << 20;
  o.q8_activations = false;  // the CPU as the float reference
  CudaBackendOptions c;
  c.f32_weights_as_f16 = false;
  c.gemm_min_tokens = gemm_min_tokens;
  c.q8_activations = q8_activations;
  o.cuda_factory = cuda_backend_factory(c);
  return o;
}

// The preset's shape with 2 layers and a 512-token vocabulary, as random stored blocks.
std::string shaped_model(const std::string& slug, TensorType type) {
  ModelSpec spec = find_model_preset(test::model_presets(), slug).spec;
  spec.name = slug + " layer shapes (random)";
  spec.n_layers = 2;
  spec.vocab_size = 512;
  spec.context_length = 256;
  const auto path =
      test::scratch_dir() / (slug + "-" + std::string(tensor_type_name(type)) + ".gguf");
  write_synthetic_gguf(path.string(), spec, type, 5, nullptr, SyntheticFill::Blocks);
  return path.string();
}

// The logits of every step of `tokens` fed one a step (decode steps: on CUDA the stacked
// projections, CUDA graphs and, by default, 8-bit activation codes) on an fp16 cache, one
// row after another.
std::vector<float> decode_step_logits(Backend& backend, const ModelSpec& spec, bool host,
                                      const std::vector<TokenId>& tokens) {
  std::vector<float> all;
  for (const auto& step :
       test::decode_step_logits(backend, spec, host, KvDtype::F16, KvDtype::F16, tokens)) {
    all.insert(all.end(), step.begin(), step.end());
  }
  return all;
}

class CudaRealShapesTest : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(CudaRealShapesTest, LogitsCloseAndGreedyIdsIdenticalToTheCpuDecoder) {
  KVSCOPE_REQUIRE_CUDA();
  const auto& [slug, type] = GetParam();
  const std::string path = shaped_model(slug, type);
  // at least gemm_min_tokens (8), so the cuBLAS run below runs the prompt through GEMMs
  std::vector<TokenId> prompt;
  for (int i = 0; i < test::device_or_emulated(24, 10); ++i) prompt.push_back(3 + (i * 53) % 500);

  const std::string what = std::string(slug) + " " + std::string(tensor_type_name(type));
  Engine cpu(path, options_for("cpu"));
  Engine gpu(path, options_for("cuda"));
  ASSERT_FALSE(gpu.backend().uses_host_kv_storage()) << gpu.backend_note();
  const std::vector<float> want = cpu.evaluate(prompt);
  test::expect_close(gpu.evaluate(prompt), want, 2e-3f, 1e-2f, what + " logits (matvec)");
  // the default: the prompt's projections through cuBLAS, fp16 activations
  Engine gemm(path, options_for("cuda", CudaBackendOptions{}.gemm_min_tokens));
  test::expect_close(gemm.evaluate(prompt), want, 5e-3f, 2e-2f, what + " logits (cuBLAS)");
  // 8-bit activation codes for the quantized types (the default below gemm_min_tokens)
  Engine q8(path, options_for("cuda", 0, true));
  test::expect_q8_logits_close(q8.evaluate(prompt), want, 512, what + " (8-bit activations)");

  GenerationRequest r;
  r.prompt = prompt;
  r.max_tokens = test::device_or_emulated(12, 4);
  r.sampling.temperature = 0;
  EXPECT_EQ(gpu.generate(r).generated, cpu.generate(r).generated) << what << " greedy ids";
}

// The default CUDA options (what a user runs) over decode steps, against the CPU decoder.
TEST_P(CudaRealShapesTest, DefaultDecodeStepsStayCloseToTheCpuDecoder) {
  KVSCOPE_REQUIRE_CUDA();
  const auto& [slug, type] = GetParam();
  const std::unique_ptr<Model> model = load_model(shaped_model(slug, type));
  std::vector<TokenId> tokens;
  for (int i = 0; i < test::device_or_emulated(40, 12); ++i) tokens.push_back(3 + (i * 71) % 500);
  CpuBackendOptions cpu_options;
  cpu_options.context_length = 256;
  cpu_options.q8_activations = false;  // the float reference
  CpuBackend cpu(*model, cpu_options);
  CudaBackendOptions cuda_options;
  cuda_options.context_length = 256;
  std::string why;
  const std::unique_ptr<Backend> gpu = make_cuda_backend(*model, cuda_options, &why);
  ASSERT_TRUE(gpu) << why;
  const std::string what = std::string(slug) + " " + std::string(tensor_type_name(type)) +
                           " decode steps, " + gpu->name();
  test::expect_q8_logits_close(decode_step_logits(*gpu, model->spec(), false, tokens),
                               decode_step_logits(cpu, model->spec(), true, tokens), 512, what);
}

// Both shapes with every type on a GPU; under the emulation (a minute a case on the CPU) each
// shape once, with a K-quant and a legacy type.
std::vector<ShapeCase> shape_cases() {
  std::vector<ShapeCase> all;
  for (const char* slug : {"tinyllama-1.1b", "llama-3-8b"}) {
    for (const TensorType t : {TensorType::F16, TensorType::Q8_0, TensorType::Q4_0,
                               TensorType::Q4_K, TensorType::Q6_K}) {
      all.emplace_back(slug, t);
    }
  }
  return test::device_or_emulated(
      all, {{"tinyllama-1.1b", TensorType::Q4_K}, {"llama-3-8b", TensorType::Q8_0}});
}

INSTANTIATE_TEST_SUITE_P(Presets, CudaRealShapesTest, ::testing::ValuesIn(shape_cases()),
                         [](const auto& p) {
                           std::string name = std::string(std::get<0>(p.param)) + "_" +
                                              std::string(tensor_type_name(std::get<1>(p.param)));
                           for (char& c : name) {
                             if (c == '-' || c == '.') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace kvscope
