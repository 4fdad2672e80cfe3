#include "kernel_test_support.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <sstream>

#include "kv/kv_cache_manager.h"
#include "plan/kv_footprint.h"

namespace kvscope::test {

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* before = std::getenv(name)) saved_ = before;
  if (value) {
    setenv(name, value, 1);
  } else {
    unsetenv(name);
  }
}

ScopedEnv::~ScopedEnv() {
  if (saved_) {
    setenv(name_.c_str(), saved_->c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

std::vector<std::vector<float>> decode_step_logits(Backend& backend, const ModelSpec& spec,
                                                   bool host, KvDtype k, KvDtype v,
                                                   const std::vector<TokenId>& tokens) {
  KvCacheConfig c = default_kv_config(spec, k, v, 16);
  c.max_context = 256;
  c.n_blocks = 32;
  c.host_storage = host;
  KvCacheManager kv(c);
  kv.add_sequence(0);
  std::vector<std::vector<float>> steps;
  std::vector<float> logits;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    kv.grow(0, 1);
    const SequenceChunk chunk{0, std::span<const TokenId>(&tokens[i], 1),
                              static_cast<std::int64_t>(i), false};
    backend.forward({&chunk, 1}, kv, logits);
    steps.push_back(logits);
  }
  return steps;
}

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

ModelSpec tiny_family_spec(const std::string& architecture) {
  const bool gemma = architecture == "gemma3";
  const bool gemma2 = architecture == "gemma2";
  ModelSpec s;
  s.architecture = architecture;
  s.name = "tiny-" + architecture;
  s.n_layers = gemma ? 7 : gemma2 ? 4 : 3;
  s.dim = 128;
  s.n_heads = 4;
  s.n_kv_heads = gemma ? 1 : 2;
  s.head_dim = gemma || gemma2 ? 64 : 32;
  s.rope_dim = s.head_dim;
  s.ffn_dim = 256;
  s.vocab_size = 320;
  s.context_length = 512;
  s.rope_theta = gemma ? 1e6 : 1e4;
  s.norm_eps = 1e-6;
  s.tied_embeddings = true;
  if (gemma) {
    s.sliding_window = 6;
    s.sliding_window_period = 6;
    s.rope_theta_local = 1e4;
  }
  if (gemma2) {  // caps that bend these small random scores and logits (the real 50 and 30
                 // would leave them straight)
    s.sliding_window = 6;
    s.sliding_window_period = 2;
    s.attn_softcap = 1.0;
    s.final_softcap = 1.5;
  }
  return s;
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

void expect_q8_logits_close(const std::vector<float>& got, const std::vector<float>& ref,
                            std::size_t vocab, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  ASSERT_TRUE(vocab > 1 && ref.size() % vocab == 0) << what;
  double diff = 0.0, size = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    diff += (static_cast<double>(got[i]) - ref[i]) * (static_cast<double>(got[i]) - ref[i]);
    size += static_cast<double>(ref[i]) * ref[i];
  }
  const double rms_diff = std::sqrt(diff / static_cast<double>(ref.size()));
  EXPECT_LT(rms_diff, 0.03 * std::sqrt(size / static_cast<double>(ref.size())))
      << what << ": RMS difference of the 8-bit activation logits";
  int checked = 0;
  for (std::size_t r = 0; r < ref.size() / vocab; ++r) {
    const auto row = ref.begin() + static_cast<std::ptrdiff_t>(r * vocab);
    std::vector<float> sorted(row, row + static_cast<std::ptrdiff_t>(vocab));
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
    if (sorted[0] - sorted[1] <= 6.0 * rms_diff) continue;  // too close to call
    const auto grow = got.begin() + static_cast<std::ptrdiff_t>(r * vocab);
    EXPECT_EQ(std::max_element(grow, grow + static_cast<std::ptrdiff_t>(vocab)) - grow,
              std::max_element(row, row + static_cast<std::ptrdiff_t>(vocab)) - row)
        << what << ": greedy token of row " << r;
    ++checked;
  }
  EXPECT_GT(checked, 0) << what << ": no row had a clear greedy token to compare";
}

}  // namespace kvscope::test
