// The portable kernels of quant_dot.h: plain C++ that does, lane for lane, what the SIMD
// kernels (quant_dot_x86.h) do, so the two give the same bits.
//
// Every format is read as 32-value blocks. Per block i of weight row r and activation row t:
//   p[j]     = sum_{k<4} w[4j+k] * q[4j+k]                 (8 integer lanes, exact)
//   acc_c[j] = fma(float(p[j]), scale[j] * d_t, acc_c[j])  (chain c = i % 2; scale[j]: the
//                                                           weight scale of lane j)
//   off_c    = fma(min, s_t, off_c)                        (only formats with a minimum)
// and at the end: out = hsum8(acc_0 + acc_1) + (off_0 + off_1). Signed formats (Q4_0, Q5_0, Q8_0,
// Q6_K) multiply their recentred codes directly; formats with a minimum (Q4_1, Q5_1, Q4_K, Q5_K)
// multiply the unsigned codes and add min * d_t * sum(q) once per block (s_t, kept by the
// activations).
#include <cmath>
#include <cstring>

#include "cpu/quant_dot/interleaved.h"
#include "cpu/quant_dot/quant_dot.h"
#include "cpu/quant_dot/quant_dot_table.h"
#include "quant/quant_blocks.h"
#include "util/half.h"

namespace kvscope::quant_dot_detail {

namespace {

// The ggml block layouts (quant/quant_blocks.h) by their own names.
using namespace quants;  // NOLINT(google-build-using-namespace)

// The 8 lanes of the SIMD kernels' accumulators.
struct Lanes {
  float v[8] = {};
};

// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)): the order of hsum8 in quant_dot_x86.h.
float hsum8(const Lanes& a) {
  float t[4];
  for (int k = 0; k < 4; ++k) t[k] = a.v[k] + a.v[k + 4];
  return (t[0] + t[2]) + (t[1] + t[3]);
}

// One weight block of 32 decoded: codes w (signed, or unsigned when the format has a
// minimum), the float scale of each of the 8 lanes (4 values each), the minimum.
struct Block32 {
  int w[32];
  float scale[8];
  float min = 0.0f;
};

void fill_scale(Block32& b, float s) {
  for (float& v : b.scale) v = s;
}

std::uint32_t load_u32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// --- formats: block i of a row -> Block32 -------------------------------------------------

template <class B>
const B& block(const std::byte* row, std::int64_t i) {
  return reinterpret_cast<const B*>(row)[i];
}

// Low nibbles are values 0..15, high nibbles 16..31; `offset` recentres them.
void nibbles(const std::uint8_t* qs, int offset, Block32& o) {
  for (int j = 0; j < 16; ++j) {
    o.w[j] = (qs[j] & 0xF) - offset;
    o.w[j + 16] = (qs[j] >> 4) - offset;
  }
}

// Bit j of qh (little-endian) is bit 4 of value j.
void fifth_bits(const std::uint8_t* qh_bytes, int offset, Block32& o) {
  const std::uint32_t qh = load_u32(qh_bytes);
  for (int j = 0; j < 32; ++j) o.w[j] += static_cast<int>(((qh >> j) & 1u) << 4) - offset;
}

struct Q4_0 {
  static constexpr bool kHasMin = false;
  static void decode(const std::byte* row, std::int64_t i, Block32& o) {
    const auto& b = block<BlockQ4_0>(row, i);
    nibbles(b.qs, 8, o);
    fill_scale(o, b.d.to_float());
  }
};
struct Q4_1 {
  static constexpr bool kHasMin = true;
  static void decode(const std::byte* row, std::int64_t i, Block32& o) {
    const auto& b = block<BlockQ4_1>(row, i);
    nibbles(b.qs, 0, o);
    fill_scale(o, b.d.to_float());
    o.min = b.m.to_float();
  }
};
struct Q5_0 {
  static constexpr bool kHasMin = false;
  static void decode(const std::byte* row, std::int64_t i, Block32& o) {
    const auto& b = block<BlockQ5_0>(row, i);
    nibbles(b.qs, 0, o);
    fifth_bits(b.qh, 16, o);
    fill_scale(o, b.d.to_float());
  }
};
struct Q5_1 {
  static constexpr bool kHasMin = true;
  static void decode(const std::byte* row, std::int64_t i, Block32& o) {
    const auto& b = block<BlockQ5_1>(row, i);
    nibbles(b.qs, 0, o);
    fifth_bits(b.qh, 0, o);
    fill_scale(o, b.d.to_float());
    o.min = b.m.to_float();
  }
};
struct Q8_0 {
  static constexpr bool kHasMin = false;
  static void decode(const std::byte* row, std::int64_t i, Block32& o) {
    const auto& b = block<BlockQ8_0>(row, i);
    for (int j = 0; j < 32; ++j) o.w[j] = b.qs[j];
    fill_scale(o, b.d.to_float());
  }
};

// Q4_K / Q5_K sub-block j of super-block i / 8: the (j % 2)-th nibbles of qs[32 (j/2) ..],
// bit j of qh[0..31] for Q5_K; scale d * sc[j], minimum -dmin * m[j].
template <class B>
struct K4 {
  static constexpr bool kHasMin = true;
  static void decode(const std::byte* row, std::int64_t i, Block32& o) {
    const auto& b = block<B>(row, i / 8);
    const int j = static_cast<int>(i % 8);
    std::uint8_t sc = 0, m = 0;
    quants::scale_min_k4(j, b.scales, sc, m);
    const std::uint8_t* qs = b.qs + 32 * (j / 2);
    for (int l = 0; l < 32; ++l) {
      o.w[l] = (qs[l] >> (4 * (j % 2))) & 0xF;
      if constexpr (std::is_same_v<B, BlockQ5_K>) o.w[l] |= ((b.qh[l] >> j) & 1) << 4;
    }
    fill_scale(o, b.d.to_float() * static_cast<float>(sc));
    o.min = -(b.dmin.to_float() * static_cast<float>(m));
  }
};
using Q4_K = K4<BlockQ4_K>;
using Q5_K = K4<BlockQ5_K>;

// Q6_K block j of super-block i / 8: half h = j / 4 of 128 values, part = j % 4 takes the low
// (part < 2) or high nibbles of ql[64h + 32 (part % 2) ..] and bits 2 part of qh[32h ..];
// codes recentred by -32; lanes 0-3 and 4-7 are its two groups of 16 with their own scales.
struct Q6_K {
  static constexpr bool kHasMin = false;
  static void decode(const std::byte* row, std::int64_t i, Block32& o) {
    const auto& b = block<BlockQ6_K>(row, i / 8);
    const int j = static_cast<int>(i % 8), h = j / 4, part = j % 4;
    const std::uint8_t* ql = b.ql + 64 * h + 32 * (part % 2);
    const std::uint8_t* qh = b.qh + 32 * h;
    for (int l = 0; l < 32; ++l) {
      const int lo = part < 2 ? (ql[l] & 0xF) : (ql[l] >> 4);
      o.w[l] = (lo | (((qh[l] >> (2 * part)) & 3) << 4)) - 32;
    }
    const float d = b.d.to_float();
    for (int k = 0; k < 8; ++k) o.scale[k] = d * static_cast<float>(b.scales[2 * j + k / 4]);
  }
};

// --- kernels ------------------------------------------------------------------------------

// One row against NT tokens, with two accumulator chains per token: block i adds into
// chain i % 2, and the chains are summed lane by lane at the end.
template <class F, int NT>
struct BlockKernel {
  static void run(const std::byte* w, std::int64_t n, EncodedRows x, float* out, std::int64_t os) {
    Lanes acc[NT][2];
    float off[NT][2] = {};
    for (std::int64_t i = 0; i < n / 32; ++i) {
      Block32 b;
      F::decode(w, i, b);
      for (int t = 0; t < NT; ++t) {
        const Q8Block& a = static_cast<const Q8Block*>(x.data)[t * x.stride + i];
        Lanes& chain = acc[t][i % 2];
        for (int j = 0; j < 8; ++j) {
          int p = 0;
          for (int k = 0; k < 4; ++k) p += b.w[4 * j + k] * a.q[4 * j + k];
          chain.v[j] = std::fma(static_cast<float>(p), b.scale[j] * a.d, chain.v[j]);
        }
        if (F::kHasMin) off[t][i % 2] = std::fma(b.min, a.s, off[t][i % 2]);
      }
    }
    for (int t = 0; t < NT; ++t) {
      Lanes both;
      for (int j = 0; j < 8; ++j) both.v[j] = acc[t][0].v[j] + acc[t][1].v[j];
      out[t * os] = hsum8(both) + (off[t][0] + off[t][1]);
    }
  }
};

// F16 / BF16 rows against activations of the same type: 8 lanes of multiply-adds, then the
// values past the last whole 8 one by one.
struct F16 {
  static float to_float(std::uint16_t h) { return quants::fp16_to_float_branchless(h); }
};
struct BF16 {
  static float to_float(std::uint16_t h) { return bf16_to_float(h); }
};

template <class F, int NT>
struct HalfKernel {
  // acc += w[i .. i + 7] * a[i .. i + 7], lane by lane
  static void add8(const std::uint16_t* w, const std::uint16_t* a, Lanes& acc) {
    for (int j = 0; j < 8; ++j) acc.v[j] = std::fma(F::to_float(w[j]), F::to_float(a[j]), acc.v[j]);
  }

  // Two chains of 8 lanes per token (even and odd groups of 8 values, a last lone group
  // into the first), then the scalar tail; the SIMD kernel runs the tokens' chains
  // side by side, which changes no token's order.
  static void run(const std::byte* row, std::int64_t n, EncodedRows x, float* out,
                  std::int64_t os) {
    const auto* w = reinterpret_cast<const std::uint16_t*>(row);
    for (int t = 0; t < NT; ++t) {
      const auto* a = static_cast<const std::uint16_t*>(x.data) + t * x.stride;
      Lanes acc[2];
      std::int64_t i = 0;
      for (; i + 16 <= n; i += 16) add8(w + i, a + i, acc[0]), add8(w + i + 8, a + i + 8, acc[1]);
      if (i + 8 <= n) add8(w + i, a + i, acc[0]), i += 8;
      float tail = 0.0f;
      for (; i < n; ++i) tail = std::fma(F::to_float(w[i]), F::to_float(a[i]), tail);
      Lanes sum;
      for (int j = 0; j < 8; ++j) sum.v[j] = acc[0].v[j] + acc[1].v[j];
      out[t * os] = hsum8(sum) + tail;
    }
  }
};

// 8 interleaved rows (interleaved.h) against NT tokens: lane r of every sum is row r.
template <class F, int NT>
struct InterleavedKernel {
  static constexpr bool kEightBit = std::is_same_v<F, Q8_0>;
  static constexpr bool kSuper = std::is_same_v<F, Q4_K>;
  static constexpr bool kFive = std::is_same_v<F, Q5_0> || std::is_same_v<F, Q5_1>;
  static constexpr int kOffset = kFive ? 16 : 8;  // Q4_0: u - 8, Q5_0: u - 16
  using Layout = GroupBlock<kEightBit, F::kHasMin, kFive>;

  // The fp16 value r of an array of them (little-endian bytes).
  static float fp16_at(const std::uint8_t* p, int r) {
    return fp16_to_float(static_cast<std::uint16_t>(p[2 * r] | (p[2 * r + 1] << 8)));
  }

  static void run(const std::uint8_t* group, std::int64_t n_blocks, EncodedRows x, float* out,
                  std::int64_t os) {
    float acc[NT][8] = {}, off[NT][8] = {};
    for (std::int64_t b = 0; b < n_blocks; ++b) {
      const std::uint8_t* codes = nullptr;
      const std::uint8_t* high_bits = nullptr;  // Q5_0 / Q5_1: [8 rows][4 bytes]
      float d[8], min[8];
      if constexpr (kSuper) {  // Q4_K: d * sc and -(dmin * m) per row, as K4::decode
        const std::uint8_t* sb = group + b / 8 * SuperGroupLayout::kBytes;
        const std::uint8_t* sub =
            sb + SuperGroupLayout::kHeader + b % 8 * SuperGroupLayout::kSubBytes;
        for (int r = 0; r < 8; ++r) {
          d[r] = fp16_at(sb, r) * static_cast<float>(sub[r]);
          min[r] = -(fp16_at(sb + 16, r) * static_cast<float>(sub[8 + r]));
        }
        codes = sub + 16;
      } else {
        const std::uint8_t* blk = group + b * Layout::kBytes;
        codes = blk + Layout::kCodeOffset;
        high_bits = blk + Layout::kHighBitsOffset;
        for (int r = 0; r < 8; ++r) {
          d[r] = fp16_at(blk, r);
          min[r] = F::kHasMin ? fp16_at(blk + 16, r) : 0.0f;
        }
      }
      for (int t = 0; t < NT; ++t) {
        const Q8Block& a = static_cast<const Q8Block*>(x.data)[t * x.stride + b];
        for (int r = 0; r < 8; ++r) {
          int p = 0;
          if constexpr (kEightBit) {
            for (int g = 0; g < 8; ++g) {
              for (int k = 0; k < 4; ++k) {
                p += (codes[(g * 8 + r) * 4 + k] - 128) * a.q[4 * g + k];
              }
            }
          } else {
            // Q4_0's codes are u - 8 (Q5_0's u - 16): the offset is subtracted in the integer
            // sum, exactly
            if (!F::kHasMin) p = -kOffset * a.sum;
            const std::uint32_t qh = kFive ? load_u32(high_bits + 4 * r) : 0;
            for (int g = 0; g < 4; ++g) {
              for (int k = 0; k < 4; ++k) {
                const std::uint8_t c = codes[(g * 8 + r) * 4 + k];
                const int lo = (c & 0xF) | static_cast<int>(((qh >> (4 * g + k)) & 1u) << 4);
                const int hi = (c >> 4) | static_cast<int>(((qh >> (16 + 4 * g + k)) & 1u) << 4);
                p += lo * a.q[4 * g + k] + hi * a.q[16 + 4 * g + k];
              }
            }
          }
          acc[t][r] = std::fma(static_cast<float>(p), d[r] * a.d, acc[t][r]);
          if (F::kHasMin) off[t][r] = std::fma(min[r], a.s, off[t][r]);
        }
      }
    }
    for (int t = 0; t < NT; ++t) {
      for (int r = 0; r < 8; ++r) out[t * os + r] = acc[t][r] + off[t][r];
    }
  }
};

// 8 interleaved Q6_K rows (interleaved.h): per sub-block two integer sums per row, one per
// half (each half has its own scale), the codes recentred by -32 in the integer sums.
template <int NT>
struct InterleavedKernel<Q6_K, NT> {
  static void run(const std::uint8_t* group, std::int64_t n_blocks, EncodedRows x, float* out,
                  std::int64_t os) {
    float acc[NT][8] = {};
    for (std::int64_t b = 0; b < n_blocks; ++b) {
      const std::uint8_t* sb = group + b / 8 * Q6GroupLayout::kBytes;
      const std::uint8_t* sub = sb + Q6GroupLayout::kHeader + b % 8 * Q6GroupLayout::kSubBytes;
      const auto* sc = reinterpret_cast<const std::int8_t*>(sub);
      const std::uint8_t* low4 = sub + 16;
      const std::uint8_t* high2 = sub + 16 + 128;
      float d0[8], d1[8];
      for (int r = 0; r < 8; ++r) {
        const float d = fp16_to_float(static_cast<std::uint16_t>(sb[2 * r] | (sb[2 * r + 1] << 8)));
        d0[r] = d * static_cast<float>(sc[r]);
        d1[r] = d * static_cast<float>(sc[8 + r]);
      }
      for (int t = 0; t < NT; ++t) {
        const Q8Block& a = static_cast<const Q8Block*>(x.data)[t * x.stride + b];
        for (int r = 0; r < 8; ++r) {
          int p0 = -32 * a.sum16, p1 = -32 * (a.sum - a.sum16);
          for (int g = 0; g < 4; ++g) {
            for (int k = 0; k < 4; ++k) {
              const std::uint8_t c = low4[(g * 8 + r) * 4 + k];
              const int h = high2[(g / 2 * 8 + r) * 4 + k] >> (4 * (g % 2));
              p0 += ((c & 0xF) | ((h & 3) << 4)) * a.q[4 * g + k];
              p1 += ((c >> 4) | (((h >> 2) & 3) << 4)) * a.q[16 + 4 * g + k];
            }
          }
          acc[t][r] = std::fma(static_cast<float>(p0), d0[r] * a.d, acc[t][r]);
          acc[t][r] = std::fma(static_cast<float>(p1), d1[r] * a.d, acc[t][r]);
        }
      }
    }
    for (int t = 0; t < NT; ++t) {
      for (int r = 0; r < 8; ++r) out[t * os + r] = acc[t][r];
    }
  }
};

}  // namespace

const KernelTable& portable_kernels() {
  static const KernelTable table = KVSCOPE_KERNEL_TABLE;
  return table;
}

}  // namespace kvscope::quant_dot_detail
