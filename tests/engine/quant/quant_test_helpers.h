// Helpers shared by the quantization tests: row round trips through the public API, and
// deterministic inputs (a normal sampler, and an LCG that Python can reproduce exactly,
// which is how the golden vectors from gguf-py were made).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "quant/tensor_type.h"

namespace kvscope::test {

inline std::vector<std::uint8_t> quantize(TensorType type, const std::vector<float>& x) {
  const auto n = static_cast<std::int64_t>(x.size());
  std::vector<std::uint8_t> row(static_cast<std::size_t>(row_bytes(type, n)));
  quantize_row(type, x.data(), row.data(), n);
  return row;
}

inline std::vector<float> dequantize(TensorType type, const std::vector<std::uint8_t>& row,
                                     std::int64_t n) {
  std::vector<float> out(static_cast<std::size_t>(n));
  dequantize_row(type, row.data(), out.data(), n);
  return out;
}

inline std::vector<float> normal_values(std::size_t n, std::uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> x(n);
  for (auto& v : x) v = dist(rng);
  return x;
}

// s = s * 1103515245 + 12345 (mod 2^32): the same sequence in C++ and Python.
class Lcg {
 public:
  explicit Lcg(std::uint32_t seed) : state_(seed) {}
  std::uint32_t next() { return state_ = state_ * 1103515245u + 12345u; }
  std::uint8_t next_byte() { return static_cast<std::uint8_t>(next() >> 24); }
  // A 24-bit signed integer times 2^-20: exact in float, in [-8, 8).
  float next_float() {
    const auto s = static_cast<std::int32_t>(next());
    return static_cast<float>(s >> 8) * (1.0f / 1048576.0f);
  }

 private:
  std::uint32_t state_;
};

// sum_i a[i] * x[i] in double, and sum_i |a[i] * x[i]| (the scale for a tolerance).
struct RefDot {
  double value = 0.0;
  double magnitude = 0.0;
};

inline RefDot reference_dot(const std::vector<float>& a, const float* x) {
  RefDot r;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double t = static_cast<double>(a[i]) * static_cast<double>(x[i]);
    r.value += t;
    r.magnitude += t < 0 ? -t : t;
  }
  return r;
}

}  // namespace kvscope::test
