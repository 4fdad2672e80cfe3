// Random weight matrices stored in a tensor type (quantized by the engine's own quantizers)
// and random activations, for the CPU kernel tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "model/model.h"
#include "quant/tensor_type.h"

namespace kvscope::test {

inline std::vector<float> random_floats(std::int64_t n, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// A rows x cols matrix of N(0, 0.05) values stored as `type`, and its view.
struct StoredWeight {
  std::vector<std::uint8_t> bytes;
  WeightView view;
};

inline StoredWeight stored_weight(TensorType type, std::int64_t rows, std::int64_t cols,
                                  std::uint32_t seed) {
  StoredWeight w;
  const std::vector<float> f = random_floats(rows * cols, seed, 0.05f);
  const std::int64_t rb = row_bytes(type, cols);
  w.bytes.resize(static_cast<std::size_t>(rows * rb));
  for (std::int64_t r = 0; r < rows; ++r) quantize_row(type, &f[r * cols], &w.bytes[r * rb], cols);
  w.view = WeightView{"test.weight", type, rows, cols, w.bytes.data()};
  return w;
}

}  // namespace kvscope::test
