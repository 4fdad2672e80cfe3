// The whole CUDA decoder against the CPU one: on the real stories260K model the greedy ids
// of every reference prompt must be llama.cpp's (as the CPU decoder's are), and on random
// models with f16 / q8_0 / q4_0 weights the logits of a prompt must agree. Without a GPU,
// make_cuda_backend must say why and the engine must fall back to the CPU.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuda_backend.h"
#include "kernel_test_support.h"
#include "model/synthetic_model.h"
#include "run/engine.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

EngineOptions cuda_options(bool f32_as_f16, std::int64_t block_size = 16) {
  EngineOptions o;
  o.backend = "cuda";
  o.n_threads = 1;
  o.block_size = block_size;
  o.context_length = 512;
  o.cuda_factory = [f32_as_f16](const Model& m, const EngineOptions& e, std::string* why) {
    CudaBackendOptions c;
    c.context_length = e.context_length;
    c.f32_weights_as_f16 = f32_as_f16;
    return make_cuda_backend(m, c, why);
  };
  return o;
}

TEST(CudaBackend, WithoutADeviceTheFactorySaysWhyAndAutoFallsBackToTheCpu) {
  if (probe_cuda_device().available) GTEST_SKIP() << "a CUDA device is present";
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions o = cuda_options(false);
  o.backend = "auto";
  Engine engine(model, o);
  EXPECT_NE(engine.backend_note().find("CUDA unavailable"), std::string::npos)
      << engine.backend_note();
  EXPECT_TRUE(engine.backend().uses_host_kv_storage());
  o.backend = "cuda";
  EXPECT_THROW(Engine(model, o), UsageError);
}

TEST(CudaBackend, StoriesGreedyIdsMatchLlamaCppForEveryReferencePrompt) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/stories260K-greedy.json");
  std::ifstream in(reference);
  const auto j = nlohmann::json::parse(in);
  for (const std::int64_t block_size : {1, 16}) {
    Engine engine(model, cuda_options(false, block_size));
    ASSERT_FALSE(engine.backend().uses_host_kv_storage()) << engine.backend_note();
    for (const auto& c : j.at("cases")) {
      GenerationRequest r;
      r.prompt = c.at("prompt_ids").get<std::vector<TokenId>>();
      r.max_tokens = 64;
      r.sampling.temperature = 0;
      const RequestResult got = engine.generate(r);
      EXPECT_EQ(got.generated, c.at("greedy_ids").get<std::vector<TokenId>>())
          << "block size " << block_size << ", prompt " << c.at("prompt").get<std::string>();
    }
  }
}

class CudaRandomModelTest : public ::testing::TestWithParam<TensorType> {};

TEST_P(CudaRandomModelTest, PromptLogitsAgreeWithTheCpuDecoder) {
  KVSCOPE_REQUIRE_CUDA();
  ModelSpec spec;
  spec.architecture = "llama";
  spec.name = "cuda-random";
  spec.n_layers = 3;
  spec.dim = 256;
  spec.n_heads = 8;
  spec.n_kv_heads = 2;
  spec.head_dim = 32;
  spec.rope_dim = 32;
  spec.ffn_dim = 512;
  spec.vocab_size = 320;
  spec.context_length = 512;
  const std::string path = (test::scratch_dir() / "random.gguf").string();
  write_synthetic_gguf(path, spec, GetParam(), 11);
  std::vector<TokenId> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(1 + (i * 37) % 300);

  EngineOptions cpu = cuda_options(false);
  cpu.backend = "cpu";
  const std::vector<float> want = Engine(path, cpu).evaluate(prompt);
  const std::vector<float> got = Engine(path, cuda_options(false)).evaluate(prompt);
  test::expect_close(got, want, 2e-3f, 1e-2f,
                     std::string("logits, weights ") + std::string(tensor_type_name(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(WeightTypes, CudaRandomModelTest,
                         ::testing::Values(TensorType::F32, TensorType::F16, TensorType::Q8_0,
                                           TensorType::Q4_0),
                         [](const auto& p) { return std::string(tensor_type_name(p.param)); });

}  // namespace
}  // namespace kvscope
