#include "kernel_test_support.h"

#include <cmath>
#include <sstream>

namespace kvscope::test {

cuda::DeviceAllocator& test_allocator() {
  static cuda::DeviceAllocator alloc(0);
  return alloc;
}

const std::vector<WeightTypeCase>& all_weight_types() {
  using D = cuda::DeviceWeightType;
  static const std::vector<WeightTypeCase> types = {
      {TensorType::F32, D::F32},   {TensorType::F16, D::F16},   {TensorType::Q8_0, D::Q8_0},
      {TensorType::Q4_0, D::Q4_0}, {TensorType::Q4_1, D::Q4_1}, {TensorType::Q5_0, D::Q5_0},
      {TensorType::Q5_1, D::Q5_1}, {TensorType::Q4_K, D::Q4_K}, {TensorType::Q5_K, D::Q5_K},
      {TensorType::Q6_K, D::Q6_K}};
  return types;
}

ModelSpec random_llama_spec(const std::string& name, const RandomLlamaShape& shape) {
  ModelSpec spec;
  spec.architecture = "llama";
  spec.name = name;
  spec.n_layers = shape.n_layers;
  spec.n_heads = shape.n_heads;
  spec.n_kv_heads = shape.n_kv_heads;
  spec.head_dim = 32;
  spec.rope_dim = 32;
  spec.dim = shape.n_heads * spec.head_dim;
  spec.ffn_dim = shape.ffn_dim;
  spec.vocab_size = shape.vocab;
  spec.context_length = shape.context;
  return spec;
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& ref, float abs,
                  float rel, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  std::size_t bad = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool both_nan = std::isnan(got[i]) && std::isnan(ref[i]);
    if (both_nan || std::fabs(got[i] - ref[i]) <= abs + rel * std::fabs(ref[i])) continue;
    if (bad < 8) first << "\n  [" << i << "] got " << got[i] << " want " << ref[i];
    ++bad;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " values outside abs " << abs
                     << " + rel " << rel << first.str();
}

}  // namespace kvscope::test
