// The CUDA decoder against the CPU decoder with each KV cache format, over decode steps:
// - on a random model, int8 and int4 caches give the CPU's logits to float rounding: the
//   append kernel writes the CPU's codes and the attention kernels read them as it does;
// - on a real chat model (SmolLM2-135M-Instruct, Q4_1: 30 layers, 9 query heads over 3 KV
//   heads of 64, a 49,152-token vocabulary) with the options a user runs, the greedy ids
//   step by step, up to the first step where the CPU's own choice is close. On a real model
//   the decoders' tiny differences (summation order) move some values of a quantized cache
//   to the next code, a step of 1/127 (int8) or 1/7 (int4) of its group's range where fp16
//   rounding moves them 1/2048; layer after layer those flips add up to a part of what the
//   format itself moves the logits by. So a choice counts as close when its margin is within
//   0.05 nats, or within what the cache format moves that step's logits by on the CPU.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cuda_factory.h"
#include "kernel_test_support.h"
#include "model/model.h"
#include "model/synthetic_model.h"
#include "plan/kv_footprint.h"
#include "run/cpu_backend.h"
#include "run/engine.h"
#include "support/test_data.h"

namespace kvscope {
namespace {

// Three layers of random Q8_0 weights: no outliers, so nothing lies near a code boundary
// often enough to flip; float activations on both sides, matvec kernels on CUDA.
TEST(CudaCacheFormats, QuantizedCachesGiveTheCpuLogitsStepByStepOnARandomModel) {
  KVSCOPE_REQUIRE_CUDA();
  const ModelSpec spec = test::random_llama_spec("cuda-cache-formats", {3, 8, 2, 512, 320, 512});
  const std::string path = (test::scratch_dir() / "cache-formats.gguf").string();
  write_synthetic_gguf(path, spec, TensorType::Q8_0, 11);
  const std::unique_ptr<Model> model = load_model(path);
  std::vector<TokenId> tokens;
  for (int i = 0; i < test::device_or_emulated(80, 40); ++i) tokens.push_back(1 + (i * 37) % 300);
  CpuBackendOptions cpu_options;
  cpu_options.context_length = 256;
  cpu_options.q8_activations = false;
  CpuBackend cpu(*model, cpu_options);
  CudaBackendOptions cuda_options;
  cuda_options.context_length = 256;
  cuda_options.q8_activations = false;
  cuda_options.gemm_min_tokens = 0;
  std::string why;
  const std::unique_ptr<Backend> gpu = make_cuda_backend(*model, cuda_options, &why);
  ASSERT_TRUE(gpu) << why;
  for (const KvDtype dtype : {KvDtype::Int8, KvDtype::Int4}) {
    const auto want = test::decode_step_logits(cpu, spec, true, dtype, dtype, tokens);
    const auto got = test::decode_step_logits(*gpu, spec, false, dtype, dtype, tokens);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t s = 0; s < want.size(); ++s) {
      test::expect_close(got[s], want[s], 1e-5f, 1e-5f,
                         std::string(kv_dtype_name(dtype)) + " cache, step " + std::to_string(s));
    }
  }
}

constexpr float kClearMargin = 0.05f;  // nats between the CPU's top two tokens

struct CacheCase {
  KvDtype k, v;
  std::int64_t exact_tail_blocks;  // 0: off
  const char* name;
};

EngineOptions options_for(const std::string& backend, const CacheCase& cache) {
  EngineOptions o;
  o.backend = parse_backend_choice(backend);
  o.context_length = 256;
  o.kv_budget_bytes = std::uint64_t{64} << 20;
  o.k_dtype = cache.k;
  o.v_dtype = cache.v;
  o.kv_exact_tail_blocks = cache.exact_tail_blocks;
  o.cuda_factory = cuda_backend_factory(CudaBackendOptions{});
  // The CUDA output projection reads one plane of 8-bit codes, as llama.cpp; the CPU's
  // second plane would move its logits by up to ~0.1 nats beside the cache format's shift.
  o.two_plane_output = false;
  return o;
}

// The greedy ids and, with margins, the gap between the top two log-probabilities per step.
struct Greedy {
  std::vector<TokenId> ids;
  std::vector<float> margins;
};

Greedy greedy(Engine& engine, const std::vector<TokenId>& prompt, int n, bool with_margins) {
  GenerationRequest r;
  r.prompt = prompt;
  r.max_tokens = n;
  r.sampling.temperature = 0;
  r.top_logprobs = with_margins ? 2 : 0;
  r.stop_at_end_of_generation = false;  // n steps each, compared one by one
  Greedy g;
  const auto on_token = [&](const TokenEvent& e) {
    if (e.top.size() == 2) g.margins.push_back(e.top[0].second - e.top[1].second);
  };
  g.ids = engine.generate(r, on_token).generated;
  return g;
}

// How far the cache format moves the CPU's logits at each generated step: the largest
// |logit| difference between the format and fp16, teacher-forced over the same tokens.
std::vector<float> format_shift(const std::string& model, const CacheCase& cache,
                                const std::vector<TokenId>& prompt, const Greedy& cpu) {
  std::vector<TokenId> all = prompt;
  all.insert(all.end(), cpu.ids.begin(), cpu.ids.end());
  const CacheCase f16{KvDtype::F16, KvDtype::F16, 0, "f16"};
  const std::vector<float> a = Engine(model, options_for("cpu", cache)).evaluate(all);
  const std::vector<float> b = Engine(model, options_for("cpu", f16)).evaluate(all);
  const std::size_t vocab = a.size() / all.size();
  std::vector<float> shift;
  for (std::size_t i = 0; i < cpu.ids.size(); ++i) {
    const std::size_t row = (prompt.size() - 1 + i) * vocab;
    float most = 0.0f;
    for (std::size_t j = 0; j < vocab; ++j)
      most = std::max(most, std::fabs(a[row + j] - b[row + j]));
    shift.push_back(most);
  }
  return shift;
}

TEST(CudaCacheFormats, SmolLm2GreedyIdsFollowTheCpuWhereItsChoiceIsClear) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(model, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  // 12 tokens, a prompt chunk through cuBLAS; the CPU's first picks (" Berlin. The capital of
  // the United States is New York City") are clear
  const std::string text = "The capital of France is Paris. The capital of Germany is";
  const int n = test::device_or_emulated(48, 12);
  const CacheCase caches[] = {{KvDtype::F16, KvDtype::F16, 0, "f16"},
                              {KvDtype::Int8, KvDtype::Int8, 0, "int8"},
                              {KvDtype::Int4, KvDtype::Int4, 0, "int4"},
                              {KvDtype::Int4, KvDtype::Int4, 2, "int4, exact tail 2 blocks"}};
  for (const CacheCase& cache : caches) {
    Engine cpu(model, options_for("cpu", cache));
    Engine gpu(model, options_for("cuda", cache));
    ASSERT_FALSE(gpu.backend().uses_host_kv_storage()) << gpu.backend_note();
    const std::vector<TokenId> prompt = cpu.tokenizer().encode(text, true);
    ASSERT_GE(prompt.size(), static_cast<std::size_t>(CudaBackendOptions{}.gemm_min_tokens));
    const Greedy want = greedy(cpu, prompt, n, true);
    const Greedy got = greedy(gpu, prompt, n, false);
    ASSERT_EQ(want.margins.size(), want.ids.size()) << cache.name;
    ASSERT_EQ(got.ids.size(), want.ids.size()) << cache.name;
    std::vector<float> close(want.ids.size(), kClearMargin);
    if (cache.k != KvDtype::F16 || cache.v != KvDtype::F16) {
      const std::vector<float> shift = format_shift(model, cache, prompt, want);
      for (std::size_t i = 0; i < close.size(); ++i) close[i] = std::max(close[i], shift[i]);
    }
    // the first step's choice is clear for every format, so at least one step is compared
    ASSERT_GT(want.margins.front(), close.front()) << cache.name;
    for (std::size_t i = 0; i < want.ids.size(); ++i) {
      if (got.ids[i] == want.ids[i]) continue;
      EXPECT_LE(want.margins[i], close[i])
          << cache.name << " cache: step " << i << " picks " << got.ids[i] << ", the CPU "
          << want.ids[i] << " with a margin of " << want.margins[i] << " nats (close below "
          << close[i] << ")";
      break;  // the two continuations differ from here on
    }
  }
}

}  // namespace
}  // namespace kvscope
