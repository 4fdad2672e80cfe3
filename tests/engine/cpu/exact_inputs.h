// Weights and activations on which every float step of a quantized dot product is exact:
// powers of two as scales (and minimums), small activation codes, halves that are small
// multiples of a power of two. On them a multiply-add gives the same bits fused or not, so
// the AVX-only kernels (no FMA: quant_dot.h) must give the portable kernels' bits, which
// checks their integer work bit for bit.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "cpu/quant_dot/q8_activations.h"
#include "quant/quant_blocks.h"
#include "quant/tensor_type.h"
#include "util/half.h"

namespace kvscope::test {

// Every scale of the blocks in `bytes` (stored `type`) set to a power of two, every minimum to
// minus one, and Q6_K's int8 sub-scales kept within +-31 (so no sum leaves float's 24 bits for
// rows of up to 256 values against exact_q8 activations). F16 / BF16 values become k / 8,
// -8 <= k < 8.
inline void make_scales_exact(TensorType type, std::vector<std::uint8_t>& bytes) {
  using namespace quants;  // NOLINT(google-build-using-namespace)
  const Half d = Half::from_float(0x1p-3f), small = Half::from_float(0x1p-5f);
  const Half minus = Half::from_float(-0x1p-2f);
  const auto each = [&bytes]<class B>(auto&& f) {
    auto* blocks = reinterpret_cast<B*>(bytes.data());
    for (std::size_t i = 0; i < bytes.size() / sizeof(B); ++i) f(blocks[i]);
  };
  switch (type) {
    case TensorType::Q4_0:
      return each.template operator()<BlockQ4_0>([&](BlockQ4_0& b) { b.d = d; });
    case TensorType::Q4_1:
      return each.template operator()<BlockQ4_1>([&](BlockQ4_1& b) { b.d = d, b.m = minus; });
    case TensorType::Q5_0:
      return each.template operator()<BlockQ5_0>([&](BlockQ5_0& b) { b.d = d; });
    case TensorType::Q5_1:
      return each.template operator()<BlockQ5_1>([&](BlockQ5_1& b) { b.d = d, b.m = minus; });
    case TensorType::Q8_0:
      return each.template operator()<BlockQ8_0>([&](BlockQ8_0& b) { b.d = small; });
    case TensorType::Q4_K:
      return each.template operator()<BlockQ4_K>([&](BlockQ4_K& b) { b.d = small, b.dmin = d; });
    case TensorType::Q5_K:
      return each.template operator()<BlockQ5_K>([&](BlockQ5_K& b) { b.d = small, b.dmin = d; });
    case TensorType::Q6_K:
      return each.template operator()<BlockQ6_K>([&](BlockQ6_K& b) {
        b.d = small;
        for (std::int8_t& s : b.scales) s = static_cast<std::int8_t>(s % 32);
      });
    case TensorType::F16:
    case TensorType::BF16: {
      auto* h = reinterpret_cast<std::uint16_t*>(bytes.data());
      for (std::size_t i = 0; i < bytes.size() / 2; ++i) {
        const float v = static_cast<float>(static_cast<int>(i * 7 % 16) - 8) / 8.0f;
        h[i] = type == TensorType::F16 ? float_to_fp16(v) : float_to_bf16(v);
      }
      return;
    }
    default:
      return;
  }
}

// n_blocks activation blocks with codes in [-15, 15] and the scale 1/64.
inline std::vector<Q8Block> exact_q8(std::int64_t n_blocks, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> code(-15, 15);
  std::vector<Q8Block> out(static_cast<std::size_t>(n_blocks));
  for (Q8Block& b : out) {
    b.sum = b.sum16 = 0;
    for (int i = 0; i < kQ8BlockValues; ++i) {
      b.q[i] = static_cast<std::int8_t>(code(rng));
      b.sum += b.q[i];
      if (i == kQ8BlockValues / 2 - 1) b.sum16 = b.sum;
    }
    b.d = 0x1p-6f;
    b.s = b.d * static_cast<float>(b.sum);
  }
  return out;
}

// n halves (F16, or BF16) of values k / 16, -8 <= k < 8.
inline std::vector<std::uint16_t> exact_halves(std::int64_t n, bool bf16, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> k(-8, 7);
  std::vector<std::uint16_t> out(static_cast<std::size_t>(n));
  for (std::uint16_t& h : out) {
    const float v = static_cast<float>(k(rng)) / 16.0f;
    h = bf16 ? float_to_bf16(v) : float_to_fp16(v);
  }
  return out;
}

}  // namespace kvscope::test
