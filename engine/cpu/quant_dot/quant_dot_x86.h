// The x86 kernels of quant_dot.h, written once for 256-bit vectors and compiled three times:
// quant_dot_avx2.cpp (AVX2 + FMA + F16C: the integer dot of 4 u8 x s8 products is
// maddubs + madd), quant_dot_avx512.cpp (AVX-512 VL + VNNI: one vpdpbusd) and
// quant_dot_avx.cpp (AVX alone: the integers in two SSE halves, x86_vec.h). Each of those
// files sets the target flags and includes this header once; nothing else includes it.
//
// Lane for lane the same arithmetic as quant_dot_portable.cpp (which explains it), so the
// AVX2 and VNNI results are the same bits. AVX-only CPUs have no FMA: there each fused
// multiply-add is a multiply and an add (v_fmadd), so their results differ from the others'
// by float rounding, while every integer sum is the same. Register shapes, per 32-value block
// (Block32):
//   codes  IVec  : 32 bytes, value i in byte i (unsigned u, or signed w for formats
//                  without a minimum)
//   p      IVec  : 8 int32 lanes, lane j = sum of values 4j .. 4j+3 times their codes
//   scale  __m256: the weight's scale of each lane (one value, or Q6_K's two groups of 16)
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu/quant_dot/interleaved.h"
#include "cpu/quant_dot/quant_dot.h"
#include "cpu/x86_vec.h"
#include "quant/quant_blocks.h"
#include "util/half.h"

namespace kvscope::quant_dot_detail {
namespace {

// The ggml block layouts (quant/quant_blocks.h) by their own names, and the vector helpers.
using namespace quants;        // NOLINT(google-build-using-namespace)
using namespace kvscope::x86;  // NOLINT(google-build-using-namespace)

// The same for signed codes w: |w| times s with w's sign.
inline IVec dot_s8s8(IVec w, IVec s) {
  return iv_dot_u8s8(iv_sign8(w, w), iv_sign8(s, w));
}

// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))
inline float hsum8(__m256 v) {
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 u = _mm_add_ps(t, _mm_movehl_ps(t, t));
  return _mm_cvtss_f32(_mm_add_ss(u, _mm_shuffle_ps(u, u, 1)));
}

// 16 bytes of packed nibbles -> 32 codes: low nibbles are values 0..15, high 16..31.
inline IVec nibbles16(const std::uint8_t* qs) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return iv_and(iv_halves(x, _mm_srli_epi16(x, 4)), iv_set1_8(0x0F));
}

// Bit i of qh (little-endian) -> 16 in byte i, else 0: the fifth bit of Q5_0/Q5_1 codes.
inline IVec fifth_bits(const std::uint8_t* qh_bytes) {
  std::uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  // Bytes 0..15 take qh's bytes 0 and 1, bytes 16..31 its bytes 2 and 3.
  const __m128i all = _mm_set1_epi32(static_cast<int>(qh));
  const __m128i lo =
      _mm_shuffle_epi8(all, _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
  const __m128i hi =
      _mm_shuffle_epi8(all, _mm_setr_epi8(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const IVec bit = iv_set1_64(static_cast<long long>(0x8040201008040201ULL));
  const IVec set = iv_cmpeq8(iv_and(iv_halves(lo, hi), bit), bit);
  return iv_and(set, iv_set1_8(0x10));
}

// An fp16 scale; the same value as Half::to_float().
inline float f16(quants::Half h) {
#if KVSCOPE_X86_AVX1
  return quants::fp16_to_float_branchless(h.bits());
#else
  return _cvtsh_ss(h.bits());
#endif
}

// One weight block of 32 decoded (the portable file's Block32 in registers).
struct Block32 {
  IVec codes;    // signed w, or unsigned u when the format has a minimum
  __m256 scale;  // per lane
  float min;
};

template <class B>
const B& block(const std::byte* row, std::int64_t i) {
  return reinterpret_cast<const B*>(row)[i];
}

// --- formats: block i of a row -> Block32 -------------------------------------------------

struct Q4_0 {
  static constexpr bool kHasMin = false;
  static Block32 decode(const std::byte* row, std::int64_t i) {
    const auto& b = block<BlockQ4_0>(row, i);
    return {iv_sub8(nibbles16(b.qs), iv_set1_8(8)), _mm256_set1_ps(f16(b.d)), 0};
  }
};
struct Q4_1 {
  static constexpr bool kHasMin = true;
  static Block32 decode(const std::byte* row, std::int64_t i) {
    const auto& b = block<BlockQ4_1>(row, i);
    return {nibbles16(b.qs), _mm256_set1_ps(f16(b.d)), f16(b.m)};
  }
};
struct Q5_0 {
  static constexpr bool kHasMin = false;
  static Block32 decode(const std::byte* row, std::int64_t i) {
    const auto& b = block<BlockQ5_0>(row, i);
    const IVec u = iv_or(nibbles16(b.qs), fifth_bits(b.qh));
    return {iv_sub8(u, iv_set1_8(16)), _mm256_set1_ps(f16(b.d)), 0};
  }
};
struct Q5_1 {
  static constexpr bool kHasMin = true;
  static Block32 decode(const std::byte* row, std::int64_t i) {
    const auto& b = block<BlockQ5_1>(row, i);
    return {iv_or(nibbles16(b.qs), fifth_bits(b.qh)), _mm256_set1_ps(f16(b.d)), f16(b.m)};
  }
};
struct Q8_0 {
  static constexpr bool kHasMin = false;
  static Block32 decode(const std::byte* row, std::int64_t i) {
    const auto& b = block<BlockQ8_0>(row, i);
    return {iv_load(b.qs), _mm256_set1_ps(f16(b.d)), 0};
  }
};

// Q4_K / Q5_K sub-block j of super-block i / 8 (see the portable file).
template <class B>
struct K4 {
  static constexpr bool kHasMin = true;
  static Block32 decode(const std::byte* row, std::int64_t i) {
    const auto& b = block<B>(row, i / 8);
    const int j = static_cast<int>(i % 8);
    std::uint8_t sc = 0, m = 0;
    quants::scale_min_k4(j, b.scales, sc, m);
    const IVec packed = iv_load(b.qs + 32 * (j / 2));
    IVec u = iv_and(iv_srl16(packed, 4 * (j % 2)), iv_set1_8(0x0F));
    if constexpr (std::is_same_v<B, BlockQ5_K>) {
      const IVec bit = iv_set1_8(static_cast<char>(1 << j));
      const IVec set = iv_cmpeq8(iv_and(iv_load(b.qh), bit), bit);
      u = iv_or(u, iv_and(set, iv_set1_8(0x10)));
    }
    return {u, _mm256_set1_ps(f16(b.d) * static_cast<float>(sc)),
            -(f16(b.dmin) * static_cast<float>(m))};
  }
};
using Q4_K = K4<BlockQ4_K>;
using Q5_K = K4<BlockQ5_K>;

// Q6_K block j of super-block i / 8 (see the portable file): 4 low bits from ql, 2 from qh,
// recentred by -32; lanes 0-3 and 4-7 are its two groups of 16.
struct Q6_K {
  static constexpr bool kHasMin = false;
  static Block32 decode(const std::byte* row, std::int64_t i) {
    const auto& b = block<BlockQ6_K>(row, i / 8);
    const int j = static_cast<int>(i % 8), h = j / 4, part = j % 4;
    const IVec ql = iv_load(b.ql + 64 * h + 32 * (part % 2));
    const IVec qh = iv_load(b.qh + 32 * h);
    const IVec lo = iv_and(iv_srl16(ql, part < 2 ? 0 : 4), iv_set1_8(0x0F));
    const IVec hi = iv_and(iv_srl16(qh, 2 * part), iv_set1_8(0x03));
    const IVec u = iv_or(lo, iv_slli16<4>(hi));
    const float d = f16(b.d);
    const __m256 scale = _mm256_set_m128(_mm_set1_ps(d * static_cast<float>(b.scales[2 * j + 1])),
                                         _mm_set1_ps(d * static_cast<float>(b.scales[2 * j])));
    return {iv_sub8(u, iv_set1_8(32)), scale, 0};
  }
};

// --- kernels ------------------------------------------------------------------------------

// One row (its blocks read in order, as the hardware prefetcher likes) against NT tokens:
// every weight block is decoded once for the NT tokens. Two accumulator chains per token, vector
// and minimum alike (even and odd blocks), so a multiply-add need not wait for the previous one:
// with one scalar chain for the minimums, Q4_1 ran at one block per fma latency (4 cycles),
// whatever the vector code did.
template <class F, int NT>
struct BlockKernel {
  // Inlined and unrolled, so the accumulators stay in registers (a loop over t left rolled
  // keeps them in memory and every multiply-add waits for a store).
  template <int kChain>
  [[gnu::always_inline]] static inline void add(const Block32& w, const Q8Block* xs,
                                                std::int64_t stride, std::int64_t i,
                                                __m256 (&acc)[NT][2], float (&off)[NT][2]) {
    const IVec abs_w = F::kHasMin ? w.codes : iv_sign8(w.codes, w.codes);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      const Q8Block& a = xs[t * stride + i];
      const IVec q = iv_load(a.q);
      const IVec p =
          F::kHasMin ? iv_dot_u8s8(w.codes, q) : iv_dot_u8s8(abs_w, iv_sign8(q, w.codes));
      acc[t][kChain] =
          v_fmadd(iv_to_float(p), _mm256_mul_ps(w.scale, _mm256_set1_ps(a.d)), acc[t][kChain]);
      if (F::kHasMin) off[t][kChain] = s_fmadd(w.min, a.s, off[t][kChain]);
    }
  }

  static void run(const std::byte* w, std::int64_t n, EncodedRows x, float* out, std::int64_t os) {
    __m256 acc[NT][2];
    float off[NT][2];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      acc[t][0] = acc[t][1] = _mm256_setzero_ps();
      off[t][0] = off[t][1] = 0.0f;
    }
    const auto* xs = static_cast<const Q8Block*>(x.data);
    const std::int64_t n_blocks = n / 32;
    std::int64_t i = 0;
    for (; i + 2 <= n_blocks; i += 2) {
      add<0>(F::decode(w, i), xs, x.stride, i, acc, off);
      add<1>(F::decode(w, i + 1), xs, x.stride, i + 1, acc, off);
    }
    if (i < n_blocks) add<0>(F::decode(w, i), xs, x.stride, i, acc, off);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      out[t * os] = hsum8(_mm256_add_ps(acc[t][0], acc[t][1])) + (off[t][0] + off[t][1]);
    }
  }
};

// --- F16 / BF16 ---------------------------------------------------------------------------

struct F16 {
  static __m256 load8(const std::uint16_t* p) { return f16x8_to_float(p); }
  static float to_float(std::uint16_t h) { return quants::fp16_to_float_branchless(h); }
};
struct BF16 {
  static __m256 load8(const std::uint16_t* p) { return bf16x8_to_float(p); }
  static float to_float(std::uint16_t h) { return bf16_to_float(h); }
};

// Two chains per token, the tokens side by side: 2 x NT independent multiply-adds per 16
// weights, each weight load serving every token (one token, one chain, waited 4 cycles per
// multiply-add).
template <class F, int NT>
struct HalfKernel {
  static void run(const std::byte* row, std::int64_t n, EncodedRows x, float* out,
                  std::int64_t os) {
    const auto* w = reinterpret_cast<const std::uint16_t*>(row);
    const auto* a = static_cast<const std::uint16_t*>(x.data);
    __m256 acc[NT][2];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) acc[t][0] = acc[t][1] = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m256 w0 = F::load8(w + i), w1 = F::load8(w + i + 8);
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        acc[t][0] = v_fmadd(w0, F::load8(a + t * x.stride + i), acc[t][0]);
        acc[t][1] = v_fmadd(w1, F::load8(a + t * x.stride + i + 8), acc[t][1]);
      }
    }
    if (i + 8 <= n) {
      const __m256 w0 = F::load8(w + i);
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        acc[t][0] = v_fmadd(w0, F::load8(a + t * x.stride + i), acc[t][0]);
      }
      i += 8;
    }
    for (int t = 0; t < NT; ++t) {
      float tail = 0.0f;
      for (std::int64_t k = i; k < n; ++k) {
        tail = s_fmadd(F::to_float(w[k]), F::to_float(a[t * x.stride + k]), tail);
      }
      out[t * os] = hsum8(_mm256_add_ps(acc[t][0], acc[t][1])) + tail;
    }
  }
};

// --- 8 interleaved rows (interleaved.h) ----------------------------------------------------

// Code group g of a 4-bit group layout against NT tokens: lo holds values 4g .. 4g + 3 of
// every row, hi values 16 + 4g ..; p[t] and q[t] are token t's two integer chains.
template <int NT>
[[gnu::always_inline]] inline void add_code_group(IVec lo, IVec hi, const Q8Block* const (&a)[NT],
                                                  int g, IVec (&p)[NT], IVec (&q)[NT]) {
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) {
    p[t] = iv_dot_add(p[t], lo, iv_broadcast4(a[t]->q + 4 * g));
    q[t] = iv_dot_add(q[t], hi, iv_broadcast4(a[t]->q + 16 + 4 * g));
  }
}

// Lane r of every register is row r. Q4_0 and Q4_1 keep unsigned nibbles: Q4_0's chains
// start at -8 x the activation code sum, so they end at the signed products exactly. Q8_0 keeps its
// codes plus 128: with VNNI the products of those unsigned bytes, minus 128 * the activations' code
// sum (the chains start there), are the signed products, exactly; maddubs would saturate on
// them, so AVX2 and AVX restore the sign and use the sign trick.
template <class F, int NT>
struct InterleavedKernel {
  static constexpr bool kEightBit = std::is_same_v<F, Q8_0>;
  static constexpr bool kSuper = std::is_same_v<F, Q4_K>;
  static constexpr bool kFive = std::is_same_v<F, Q5_0> || std::is_same_v<F, Q5_1>;
  static constexpr int kOffset = kFive ? 16 : 8;  // Q4_0: u - 8, Q5_0: u - 16
  using Layout = GroupBlock<kEightBit, F::kHasMin, kFive>;

  // 16 in byte k of lane r where bit `first + k` of lane r's 32 fifth bits is set, else 0:
  // the fifth bits of code group g (first = 4g for the low nibbles, 16 + 4g for the high).
  static IVec fifth_bits8(IVec qh, int first) {
    const IVec shifted = iv_srl32(qh, first);
    const IVec spread =
        iv_shuffle8(shifted, iv_bytes16(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12));
    const IVec bit = iv_set1_32(0x08040201);
    const IVec set = iv_cmpeq8(iv_and(spread, bit), bit);
    return iv_and(set, iv_set1_8(0x10));
  }

  static void run(const std::uint8_t* group, std::int64_t n_blocks, EncodedRows x, float* out,
                  std::int64_t os) {
    __m256 acc[NT], off[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) acc[t] = off[t] = _mm256_setzero_ps();
    const auto* xs = static_cast<const Q8Block*>(x.data);
    const IVec low4 = iv_set1_8(0x0F);
    for (std::int64_t b = 0; b < n_blocks; ++b) {
      const std::uint8_t* codes = nullptr;
      IVec qh = iv_zero();  // Q5_0 / Q5_1: lane r = row r's fifth bits
      __m256 d, min = _mm256_setzero_ps();
      if constexpr (kSuper) {  // Q4_K: d * sc and -(dmin * m) per row, as K4::decode
        const std::uint8_t* sb = group + b / 8 * SuperGroupLayout::kBytes;
        const std::uint8_t* sub =
            sb + SuperGroupLayout::kHeader + b % 8 * SuperGroupLayout::kSubBytes;
        d = _mm256_mul_ps(f16x8_to_float(sb), u8x8_to_float(sub));
        min = _mm256_xor_ps(_mm256_mul_ps(f16x8_to_float(sb + 16), u8x8_to_float(sub + 8)),
                            _mm256_set1_ps(-0.0f));  // negation, as the portable unary minus
        codes = sub + 16;
      } else {
        const std::uint8_t* blk = group + b * Layout::kBytes;
        codes = blk + Layout::kCodeOffset;
        if constexpr (kFive) qh = iv_load(blk + Layout::kHighBitsOffset);
        d = f16x8_to_float(blk);
        if constexpr (F::kHasMin) min = f16x8_to_float(blk + 16);
      }
      // Two integer chains per token (p, q: even and odd parts of the block), so a dot
      // product need not wait for the one before it (its latency is 4-5 cycles); the integer
      // sum p + q is exact, so the result does not depend on the split.
      const Q8Block* a[NT];
      IVec p[NT], q[NT];
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        a[t] = &xs[t * x.stride + b];
        p[t] = q[t] = iv_zero();
        if (!kEightBit && !F::kHasMin) p[t] = iv_set1_32(-kOffset * a[t]->sum);
#if KVSCOPE_X86_VNNI
        if (kEightBit) p[t] = iv_set1_32(-128 * a[t]->sum);
#endif
      }
      if constexpr (kEightBit) {
#pragma GCC unroll 4
        for (int g = 0; g < 8; g += 2) {
          const IVec u0 = iv_load(codes + 32 * g), u1 = iv_load(codes + 32 * (g + 1));
#if KVSCOPE_X86_VNNI
#pragma GCC unroll 4
          for (int t = 0; t < NT; ++t) {
            p[t] = iv_dot_add(p[t], u0, iv_broadcast4(a[t]->q + 4 * g));
            q[t] = iv_dot_add(q[t], u1, iv_broadcast4(a[t]->q + 4 * g + 4));
          }
#else
          const IVec bias = iv_set1_8(static_cast<char>(0x80));
          const IVec w0 = iv_xor(u0, bias), w1 = iv_xor(u1, bias);
          const IVec abs_w0 = iv_sign8(w0, w0), abs_w1 = iv_sign8(w1, w1);
#pragma GCC unroll 4
          for (int t = 0; t < NT; ++t) {
            p[t] = iv_dot_add(p[t], abs_w0, iv_sign8(iv_broadcast4(a[t]->q + 4 * g), w0));
            q[t] = iv_dot_add(q[t], abs_w1, iv_sign8(iv_broadcast4(a[t]->q + 4 * g + 4), w1));
          }
#endif
        }
      } else {
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
          const IVec packed = iv_load(codes + 32 * g);
          IVec lo = iv_and(packed, low4);
          IVec hi = iv_and(iv_srli16<4>(packed), low4);
          if constexpr (kFive) {
            lo = iv_or(lo, fifth_bits8(qh, 4 * g));
            hi = iv_or(hi, fifth_bits8(qh, 16 + 4 * g));
          }
          add_code_group<NT>(lo, hi, a, g, p, q);
        }
      }
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        acc[t] = v_fmadd(iv_to_float(iv_add32(p[t], q[t])),
                         _mm256_mul_ps(d, _mm256_set1_ps(a[t]->d)), acc[t]);
        if (F::kHasMin) off[t] = v_fmadd(min, _mm256_set1_ps(a[t]->s), off[t]);
      }
    }
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + t * os, _mm256_add_ps(acc[t], off[t]));
  }
};

// 8 interleaved Q6_K rows (see the portable file): two integer chains per token, one per half
// of the sub-block, each starting at -32 x its half of the activation codes' sum.
template <int NT>
struct InterleavedKernel<Q6_K, NT> {
  static void run(const std::uint8_t* group, std::int64_t n_blocks, EncodedRows x, float* out,
                  std::int64_t os) {
    __m256 acc[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    const auto* xs = static_cast<const Q8Block*>(x.data);
    const IVec low4m = iv_set1_8(0x0F), three = iv_set1_8(0x03);
    for (std::int64_t b = 0; b < n_blocks; ++b) {
      const std::uint8_t* sb = group + b / 8 * Q6GroupLayout::kBytes;
      const std::uint8_t* sub = sb + Q6GroupLayout::kHeader + b % 8 * Q6GroupLayout::kSubBytes;
      const std::uint8_t* low4 = sub + 16;
      const std::uint8_t* high2 = sub + 16 + 128;
      const __m256 d = f16x8_to_float(sb);
      const __m256 d0 = _mm256_mul_ps(d, s8x8_to_float(sub));
      const __m256 d1 = _mm256_mul_ps(d, s8x8_to_float(sub + 8));
      const Q8Block* a[NT];
      IVec p[NT], q[NT];
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        a[t] = &xs[t * x.stride + b];
        p[t] = iv_set1_32(-32 * a[t]->sum16);
        q[t] = iv_set1_32(-32 * (a[t]->sum - a[t]->sum16));
      }
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        const IVec packed = iv_load(low4 + 32 * g);
        IVec h = iv_load(high2 + 32 * (g / 2));
        if (g % 2) h = iv_srli16<4>(h);
        const IVec lo = iv_or(iv_and(packed, low4m), iv_slli16<4>(iv_and(h, three)));
        const IVec hi = iv_or(iv_and(iv_srli16<4>(packed), low4m),
                              iv_slli16<4>(iv_and(iv_srli16<2>(h), three)));
        add_code_group<NT>(lo, hi, a, g, p, q);
      }
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        const __m256 ad = _mm256_set1_ps(a[t]->d);
        acc[t] = v_fmadd(iv_to_float(p[t]), _mm256_mul_ps(d0, ad), acc[t]);
        acc[t] = v_fmadd(iv_to_float(q[t]), _mm256_mul_ps(d1, ad), acc[t]);
      }
    }
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + t * os, acc[t]);
  }
};

}  // namespace
}  // namespace kvscope::quant_dot_detail
