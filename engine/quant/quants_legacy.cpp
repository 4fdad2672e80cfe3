// Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0: blocks of 32 values with one fp16 scale (and an fp16
// min for the _1 types). Each block is first unpacked into 32 small integers q, so that
// dequantize (q * d [+ m]) and the dot product (d * sum q*x [+ m * sum x]) share one
// reading of the bit layout. Quantizers follow ggml's quantize_row_*_ref rounding.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/quant_blocks.h"

namespace kvscope::quants {

namespace {

std::uint32_t load_u32_le(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

void store_u32_le(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// Low nibble of qs[j] is value j, high nibble value j + 16; `offset` recentres q.
void unpack_nibbles(const std::uint8_t* qs, int offset, std::int8_t* q) {
  for (int j = 0; j < kQK / 2; ++j) {
    q[j] = static_cast<std::int8_t>((qs[j] & 0x0F) - offset);
    q[j + kQK / 2] = static_cast<std::int8_t>((qs[j] >> 4) - offset);
  }
}

// As unpack_nibbles, plus bit j of qh (little-endian uint32) as bit 4 of value j.
void unpack_5bit(const std::uint8_t* qs, const std::uint8_t* qh_bytes, int offset, std::int8_t* q) {
  const std::uint32_t qh = load_u32_le(qh_bytes);
  for (int j = 0; j < kQK / 2; ++j) {
    const int hi0 = static_cast<int>((qh >> j) & 1u) << 4;
    const int hi1 = static_cast<int>((qh >> (j + kQK / 2)) & 1u) << 4;
    q[j] = static_cast<std::int8_t>(((qs[j] & 0x0F) | hi0) - offset);
    q[j + kQK / 2] = static_cast<std::int8_t>(((qs[j] >> 4) | hi1) - offset);
  }
}

// The inverse of unpack_nibbles (before its offset): q[j] low, q[j + 16] high.
void pack_nibbles(const std::uint8_t* q, std::uint8_t* qs) {
  for (int j = 0; j < kQK / 2; ++j) qs[j] = static_cast<std::uint8_t>(q[j] | (q[j + kQK / 2] << 4));
}

// The inverse of unpack_5bit (before its offset): the low 4 bits as pack_nibbles, bit 4 of
// value j as bit j of qh.
void pack_5bit(const std::uint8_t* q, std::uint8_t* qs, std::uint8_t* qh_bytes) {
  std::uint32_t qh = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    qs[j] = static_cast<std::uint8_t>((q[j] & 0x0F) | ((q[j + kQK / 2] & 0x0F) << 4));
    qh |= static_cast<std::uint32_t>((q[j] & 0x10u) >> 4) << j;
    qh |= static_cast<std::uint32_t>((q[j + kQK / 2] & 0x10u) >> 4) << (j + kQK / 2);
  }
  store_u32_le(qh_bytes, qh);
}

struct Q4_0 {
  using Block = BlockQ4_0;
  static constexpr bool kHasMin = false;
  static constexpr int kLevels = 16;
  static void unpack(const Block& b, std::int8_t* q) { unpack_nibbles(b.qs, 8, q); }
  static void pack(const std::uint8_t* q, Block& b) { pack_nibbles(q, b.qs); }
  static float min(const Block&) { return 0.0f; }
};

struct Q4_1 {
  using Block = BlockQ4_1;
  static constexpr bool kHasMin = true;
  static constexpr int kLevels = 16;
  static void unpack(const Block& b, std::int8_t* q) { unpack_nibbles(b.qs, 0, q); }
  static void pack(const std::uint8_t* q, Block& b) { pack_nibbles(q, b.qs); }
  static float min(const Block& b) { return b.m.to_float(); }
};

struct Q5_0 {
  using Block = BlockQ5_0;
  static constexpr bool kHasMin = false;
  static constexpr int kLevels = 32;
  static void unpack(const Block& b, std::int8_t* q) { unpack_5bit(b.qs, b.qh, 16, q); }
  static void pack(const std::uint8_t* q, Block& b) { pack_5bit(q, b.qs, b.qh); }
  static float min(const Block&) { return 0.0f; }
};

struct Q5_1 {
  using Block = BlockQ5_1;
  static constexpr bool kHasMin = true;
  static constexpr int kLevels = 32;
  static void unpack(const Block& b, std::int8_t* q) { unpack_5bit(b.qs, b.qh, 0, q); }
  static void pack(const std::uint8_t* q, Block& b) { pack_5bit(q, b.qs, b.qh); }
  static float min(const Block& b) { return b.m.to_float(); }
};

struct Q8_0 {
  using Block = BlockQ8_0;
  static constexpr bool kHasMin = false;
  static void unpack(const Block& b, std::int8_t* q) { std::memcpy(q, b.qs, kQK); }
  static float min(const Block&) { return 0.0f; }
};

template <class Codec>
void dequantize_blocks(const void* src, float* dst, std::int64_t n) {
  const auto* blocks = static_cast<const typename Codec::Block*>(src);
  std::int8_t q[kQK];
  for (std::int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
    Codec::unpack(blocks[b], q);
    const float d = blocks[b].d.to_float();
    const float m = Codec::min(blocks[b]);
    for (int j = 0; j < kQK; ++j) {
      dst[j] = Codec::kHasMin ? static_cast<float>(q[j]) * d + m : static_cast<float>(q[j]) * d;
    }
  }
}

template <class Codec>
float dot_blocks(const void* row, const float* x, std::int64_t n) {
  const auto* blocks = static_cast<const typename Codec::Block*>(row);
  std::int8_t q[kQK];
  float total = 0.0f;
  for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    Codec::unpack(blocks[b], q);
    const float d = blocks[b].d.to_float();
    if constexpr (Codec::kHasMin) {
      float qx = 0.0f;
      float sx = 0.0f;
      dot_and_sum<kQK>(q, x, qx, sx);
      total += d * qx + Codec::min(blocks[b]) * sx;
    } else {
      total += d * dot_q<kQK>(q, x);
    }
  }
  return total;
}

// The value of largest magnitude, with its sign (ggml's "max" for the symmetric types).
float signed_absmax(const float* x) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, float& min, float& max) {
  min = x[0];
  max = x[0];
  for (int j = 1; j < kQK; ++j) {
    min = std::min(min, x[j]);
    max = std::max(max, x[j]);
  }
}

// 1/d, or 0 for an all-zero block (every q is then the zero point).
float reciprocal(float d) {
  return d != 0.0f ? 1.0f / d : 0.0f;
}

// One block's scale by ggml's rule, written into the block (d, and m for the types with a
// min), with what the values are quantized by: 1/d and the min.
//   symmetric (Q4_0, Q5_0): d = signed absmax / -(levels / 2), the extreme value at q = 0;
//   with a min (Q4_1, Q5_1): d = (max - min) / (levels - 1), min at q = 0.
struct BlockScale {
  float id = 0.0f;
  float min = 0.0f;
};

template <class Codec>
BlockScale write_scale(const float* x, typename Codec::Block& y) {
  if constexpr (Codec::kHasMin) {
    float min = 0.0f;
    float max = 0.0f;
    min_max(x, min, max);
    const float d = (max - min) / static_cast<float>(Codec::kLevels - 1);
    y.d = Half::from_float(d);
    y.m = Half::from_float(min);
    return {reciprocal(d), min};
  } else {
    const float d = signed_absmax(x) / -static_cast<float>(Codec::kLevels / 2);
    y.d = Half::from_float(d);
    return {reciprocal(d), 0.0f};
  }
}

// ggml's quantize_row_*_ref: q = (int)(x / d + levels / 2 + 0.5) for the symmetric types,
// (int)((x - min) / d + 0.5) for the others, at most levels - 1 (reached by rounding at the
// extreme; ggml leaves Q5_1 unclamped, where the clamp never bites).
template <class Codec>
void quantize_blocks(const float* x, void* dst, std::int64_t n) {
  auto* y = static_cast<typename Codec::Block*>(dst);
  constexpr float kRoundedZero = static_cast<float>(Codec::kLevels / 2) + 0.5f;
  std::uint8_t q[kQK];
  for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    const BlockScale s = write_scale<Codec>(x, y[b]);
    for (int j = 0; j < kQK; ++j) {
      const int level = Codec::kHasMin ? static_cast<int>((x[j] - s.min) * s.id + 0.5f)
                                       : static_cast<int>(x[j] * s.id + kRoundedZero);
      q[j] = static_cast<std::uint8_t>(std::min(Codec::kLevels - 1, level));
    }
    Codec::pack(q, y[b]);
  }
}

}  // namespace

void dequantize_q4_0(const void* src, float* dst, std::int64_t n) {
  dequantize_blocks<Q4_0>(src, dst, n);
}
void dequantize_q4_1(const void* src, float* dst, std::int64_t n) {
  dequantize_blocks<Q4_1>(src, dst, n);
}
void dequantize_q5_0(const void* src, float* dst, std::int64_t n) {
  dequantize_blocks<Q5_0>(src, dst, n);
}
void dequantize_q5_1(const void* src, float* dst, std::int64_t n) {
  dequantize_blocks<Q5_1>(src, dst, n);
}
void dequantize_q8_0(const void* src, float* dst, std::int64_t n) {
  dequantize_blocks<Q8_0>(src, dst, n);
}

float dot_q4_0(const void* row, const float* x, std::int64_t n) {
  return dot_blocks<Q4_0>(row, x, n);
}
float dot_q4_1(const void* row, const float* x, std::int64_t n) {
  return dot_blocks<Q4_1>(row, x, n);
}
float dot_q5_0(const void* row, const float* x, std::int64_t n) {
  return dot_blocks<Q5_0>(row, x, n);
}
float dot_q5_1(const void* row, const float* x, std::int64_t n) {
  return dot_blocks<Q5_1>(row, x, n);
}
float dot_q8_0(const void* row, const float* x, std::int64_t n) {
  return dot_blocks<Q8_0>(row, x, n);
}

void quantize_q4_0(const float* x, void* dst, std::int64_t n) {
  quantize_blocks<Q4_0>(x, dst, n);
}
void quantize_q4_1(const float* x, void* dst, std::int64_t n) {
  quantize_blocks<Q4_1>(x, dst, n);
}
void quantize_q5_0(const float* x, void* dst, std::int64_t n) {
  quantize_blocks<Q5_0>(x, dst, n);
}
void quantize_q5_1(const float* x, void* dst, std::int64_t n) {
  quantize_blocks<Q5_1>(x, dst, n);
}

void quantize_q8_0(const float* x, void* dst, std::int64_t n) {
  auto* y = static_cast<BlockQ8_0*>(dst);
  for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = reciprocal(d);
    y[b].d = Half::from_float(d);
    for (int j = 0; j < kQK; ++j) y[b].qs[j] = static_cast<std::int8_t>(std::round(x[j] * id));
  }
}

}  // namespace kvscope::quants
