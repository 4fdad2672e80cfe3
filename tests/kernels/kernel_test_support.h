// Helpers of the CUDA kernel tests: skip without a device, move vectors to and from the
// device, random inputs, and the comparison every test uses (|got - ref| <= abs + rel *
// |ref|, printing the first mismatches).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cuda_device.h"
#include "backend/device_allocator.h"
#include "backend/kernel_launchers.h"
#include "model/model_spec.h"
#include "quant/tensor_type.h"
#include "run/backend.h"

namespace kvscope::test {

// Skips the test, naming why, when no CUDA device is usable.
#define KVSCOPE_REQUIRE_CUDA()                                                      \
  do {                                                                              \
    const ::kvscope::CudaDeviceInfo kvscope_info_ = ::kvscope::probe_cuda_device(); \
    if (!kvscope_info_.available) {                                                 \
      GTEST_SKIP() << "no CUDA device: " << kvscope_info_.reason;                   \
    }                                                                               \
  } while (0)

// Whether this binary runs the kernels under the CUDA emulation (kernels/emulation): on the
// CPU, one fiber per CUDA thread, far slower than a GPU, so the end-to-end tests pick
// shorter runs there.
#ifdef KVSCOPE_TEST_UNDER_EMULATION
inline constexpr bool kEmulated = true;
#else
inline constexpr bool kEmulated = false;
#endif
// `on_device` on a GPU, `emulated` under the emulation (a step count, a list of cases).
template <typename T>
T device_or_emulated(T on_device, T emulated) {
  return kEmulated ? emulated : on_device;
}

// Sets (value) or unsets (nullptr) an environment variable for the scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

// One allocator per test process (device 0).
cuda::DeviceAllocator& test_allocator();

template <typename T>
cuda::DeviceBuffer to_device(const std::vector<T>& host) {
  cuda::DeviceBuffer b(test_allocator(), std::max<std::size_t>(host.size() * sizeof(T), 1),
                       cuda::DeviceMemoryCategory::Workspace, "test input");
  b.upload(host.data(), host.size() * sizeof(T));
  return b;
}

template <typename T>
cuda::DeviceBuffer device_zeros(std::size_t n) {
  cuda::DeviceBuffer b(test_allocator(), std::max<std::size_t>(n * sizeof(T), 1),
                       cuda::DeviceMemoryCategory::Workspace, "test output");
  b.fill_zero();
  return b;
}

// Waits for the kernels (so their errors surface here) and copies n values back.
template <typename T>
std::vector<T> from_device(const cuda::DeviceBuffer& b, std::size_t n) {
  std::vector<T> host(n);
  b.download(host.data(), n * sizeof(T));
  return host;
}

// A weight type as the file stores it and as the device kernels call it.
struct WeightTypeCase {
  TensorType type;
  cuda::DeviceWeightType device;
};
// Every type the device holds matrices in, F32 to Q6_K.
const std::vector<WeightTypeCase>& all_weight_types();
// A parameterised test's name: the type's ("q4_K").
inline std::string weight_type_test_name(const ::testing::TestParamInfo<WeightTypeCase>& info) {
  return std::string(tensor_type_name(info.param.type));
}

// The shape of a random-weight llama test model: head_dim 32 with RoPE over all of it, and
// dim = n_heads * 32. dim and ffn_dim multiples of 256 give the K-quants whole super-blocks.
struct RandomLlamaShape {
  std::int64_t n_layers = 2, n_heads = 8, n_kv_heads = 2, ffn_dim = 512, vocab = 300;
  std::int64_t context = 512;
};
ModelSpec random_llama_spec(const std::string& name, const RandomLlamaShape& shape);

// A tiny "qwen3" (q/k norms, head_dim 32 beside dim 128) or "gemma3" (MQA, head_dim 64,
// layers 0-4 and 6 sliding over 6 tokens with their own RoPE base, q/k norms, post-norms,
// GELU gate, scaled embeddings) or "gemma2" (4 layers, every other one sliding, soft-caps
// of 1.0 on the scores and 1.5 on the logits) for write_synthetic_gguf, whose reader fills in
// the rest of the family.
ModelSpec tiny_family_spec(const std::string& architecture);

// n values uniform in [-scale, scale].
std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float scale = 1.0f);

// Expects |got[i] - ref[i]| <= abs + rel * |ref[i]| for every i (NaN only matches NaN),
// reporting the count and the first few mismatches with `what`.
void expect_close(const std::vector<float>& got, const std::vector<float>& ref, float abs,
                  float rel, const std::string& what);

// The logits of every step of `tokens` fed one a step through `backend` (decode steps) into
// a fresh cache of k/v dtypes (host bytes or device-held), [steps][vocab].
std::vector<std::vector<float>> decode_step_logits(Backend& backend, const ModelSpec& spec,
                                                   bool host, KvDtype k, KvDtype v,
                                                   const std::vector<TokenId>& tokens);

// Logits of a decoder whose projections read 8-bit activation codes (CudaBackendOptions::
// q8_activations) against exact ones, rows of `vocab`: the RMS difference within 3% of the
// logits' RMS, and every row whose top two logits are more than 6 such differences apart
// picking the same greedy token.
void expect_q8_logits_close(const std::vector<float>& got, const std::vector<float>& ref,
                            std::size_t vocab, const std::string& what);

}  // namespace kvscope::test
