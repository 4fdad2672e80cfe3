// The x86 kernels of quant_dot.h, written once for 256-bit vectors and compiled twice:
// quant_dot_avx2.cpp (AVX2 + FMA + F16C: the integer dot of 4 u8 x s8 products is
// maddubs + madd) and quant_dot_avx512.cpp (AVX-512 VL + VNNI: one vpdpbusd). Each of those
// files sets the target flags and includes this header once; nothing else includes it.
//
// Lane for lane the same arithmetic as quant_dot_portable.cpp (which explains it), so the
// results are the same bits. Register shapes, per 32-value block (Block32):
//   codes  __m256i: 32 bytes, value i in byte i (unsigned u, or signed w for formats
//                   without a minimum)
//   p      __m256i: 8 int32 lanes, lane j = sum of values 4j .. 4j+3 times their codes
//   scale  __m256 : the weight's scale of each lane (one value, or Q6_K's two groups of 16)
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu/quant_dot/interleaved.h"
#include "cpu/quant_dot/quant_dot.h"
#include "quant/quant_blocks.h"
#include "util/half.h"

namespace kvscope::quant_dot_detail {
namespace {

// The ggml block layouts (quant/quant_blocks.h) by their own names.
using namespace quants;  // NOLINT(google-build-using-namespace)

// lane j = sum_{k<4} u[4j+k] * s[4j+k], u unsigned, s signed; exact (no saturation for
// the code ranges used here: u <= 31 with s, or u <= 128 after the sign trick).
inline __m256i dot_u8s8(__m256i u, __m256i s) {
#if KVSCOPE_QDOT_VNNI
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

// The same for signed codes w: |w| times s with w's sign.
inline __m256i dot_s8s8(__m256i w, __m256i s) {
  return dot_u8s8(_mm256_sign_epi8(w, w), _mm256_sign_epi8(s, w));
}

// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))
inline float hsum8(__m256 v) {
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 u = _mm_add_ps(t, _mm_movehl_ps(t, t));
  return _mm_cvtss_f32(_mm_add_ss(u, _mm_shuffle_ps(u, u, 1)));
}

// 16 bytes of packed nibbles -> 32 codes: low nibbles are values 0..15, high 16..31.
inline __m256i nibbles16(const std::uint8_t* qs) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(x, 4), x);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// Bit i of qh (little-endian) -> 16 in byte i, else 0: the fifth bit of Q5_0/Q5_1 codes.
inline __m256i fifth_bits(const std::uint8_t* qh_bytes) {
  std::uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  const __m256i shuffle = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,  //
                                           2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)), shuffle);
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// An fp16 scale in one instruction (F16C); the same value as Half::to_float().
inline float f16(quants::Half h) {
  return _cvtsh_ss(h.bits());
}

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// One weight block of 32 decoded (the portable file's Block32 in registers).
struct Block32 {
  __m256i codes;  // signed w, or unsigned u when the format has a minimum
  __m256 scale;   // per lane
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
    return {_mm256_sub_epi8(nibbles16(b.qs), _mm256_set1_epi8(8)), _mm256_set1_ps(f16(b.d)), 0};
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
    const __m256i u = _mm256_or_si256(nibbles16(b.qs), fifth_bits(b.qh));
    return {_mm256_sub_epi8(u, _mm256_set1_epi8(16)), _mm256_set1_ps(f16(b.d)), 0};
  }
};
struct Q5_1 {
  static constexpr bool kHasMin = true;
  static Block32 decode(const std::byte* row, std::int64_t i) {
    const auto& b = block<BlockQ5_1>(row, i);
    return {_mm256_or_si256(nibbles16(b.qs), fifth_bits(b.qh)), _mm256_set1_ps(f16(b.d)), f16(b.m)};
  }
};
struct Q8_0 {
  static constexpr bool kHasMin = false;
  static Block32 decode(const std::byte* row, std::int64_t i) {
    const auto& b = block<BlockQ8_0>(row, i);
    return {load32(b.qs), _mm256_set1_ps(f16(b.d)), 0};
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
    const __m256i packed = load32(b.qs + 32 * (j / 2));
    const __m128i shift = _mm_cvtsi32_si128(4 * (j % 2));
    __m256i u = _mm256_and_si256(_mm256_srl_epi16(packed, shift), _mm256_set1_epi8(0x0F));
    if constexpr (std::is_same_v<B, BlockQ5_K>) {
      const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << j));
      const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(load32(b.qh), bit), bit);
      u = _mm256_or_si256(u, _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
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
    const __m256i ql = load32(b.ql + 64 * h + 32 * (part % 2));
    const __m256i qh = load32(b.qh + 32 * h);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i lo =
        _mm256_and_si256(_mm256_srl_epi16(ql, _mm_cvtsi32_si128(part < 2 ? 0 : 4)), low4);
    const __m256i hi =
        _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * part)), _mm256_set1_epi8(0x03));
    const __m256i u = _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4));
    const float d = f16(b.d);
    const __m256 scale = _mm256_set_m128(_mm_set1_ps(d * static_cast<float>(b.scales[2 * j + 1])),
                                         _mm_set1_ps(d * static_cast<float>(b.scales[2 * j])));
    return {_mm256_sub_epi8(u, _mm256_set1_epi8(32)), scale, 0};
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
    const __m256i abs_w = F::kHasMin ? w.codes : _mm256_sign_epi8(w.codes, w.codes);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      const Q8Block& a = xs[t * stride + i];
      const __m256i q = load32(a.q);
      const __m256i p =
          F::kHasMin ? dot_u8s8(w.codes, q) : dot_u8s8(abs_w, _mm256_sign_epi8(q, w.codes));
      acc[t][kChain] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p),
                                       _mm256_mul_ps(w.scale, _mm256_set1_ps(a.d)), acc[t][kChain]);
      if (F::kHasMin) off[t][kChain] = std::fma(w.min, a.s, off[t][kChain]);
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
  static __m256 load8(const std::uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float to_float(std::uint16_t h) { return quants::fp16_to_float_branchless(h); }
};
struct BF16 {
  static __m256 load8(const std::uint16_t* p) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
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
        acc[t][0] = _mm256_fmadd_ps(w0, F::load8(a + t * x.stride + i), acc[t][0]);
        acc[t][1] = _mm256_fmadd_ps(w1, F::load8(a + t * x.stride + i + 8), acc[t][1]);
      }
    }
    if (i + 8 <= n) {
      const __m256 w0 = F::load8(w + i);
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        acc[t][0] = _mm256_fmadd_ps(w0, F::load8(a + t * x.stride + i), acc[t][0]);
      }
      i += 8;
    }
    for (int t = 0; t < NT; ++t) {
      float tail = 0.0f;
      for (std::int64_t k = i; k < n; ++k) {
        tail = std::fma(F::to_float(w[k]), F::to_float(a[t * x.stride + k]), tail);
      }
      out[t * os] = hsum8(_mm256_add_ps(acc[t][0], acc[t][1])) + tail;
    }
  }
};

// --- 8 interleaved rows (interleaved.h) ----------------------------------------------------

// sum += the dot products of 4 codes per lane with 4 activation bytes broadcast to all lanes.
inline __m256i dot_add(__m256i sum, __m256i u, __m256i s) {
#if KVSCOPE_QDOT_VNNI
  return _mm256_dpbusd_epi32(sum, u, s);
#else
  return _mm256_add_epi32(sum, dot_u8s8(u, s));
#endif
}

inline __m256i broadcast4(const std::int8_t* q) {
  std::int32_t v;
  std::memcpy(&v, q, 4);
  return _mm256_set1_epi32(v);
}

// Code group g of a 4-bit group layout against NT tokens: lo holds values 4g .. 4g + 3 of
// every row, hi values 16 + 4g ..; p[t] and q[t] are token t's two integer chains.
template <int NT>
[[gnu::always_inline]] inline void add_code_group(__m256i lo, __m256i hi,
                                                  const Q8Block* const (&a)[NT], int g,
                                                  __m256i (&p)[NT], __m256i (&q)[NT]) {
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) {
    p[t] = dot_add(p[t], lo, broadcast4(a[t]->q + 4 * g));
    q[t] = dot_add(q[t], hi, broadcast4(a[t]->q + 16 + 4 * g));
  }
}

// Lane r of every register is row r. Q4_0 and Q4_1 keep unsigned nibbles: Q4_0's chains
// start at -8 x the activation code sum, so they end at the signed products exactly. Q8_0 keeps its
// codes plus 128: with VNNI the products of those unsigned bytes, minus 128 * the activations' code
// sum (the chains start there), are the signed products, exactly; AVX2's maddubs would saturate on
// them, so it restores the sign and uses the sign trick.
template <class F, int NT>
struct InterleavedKernel {
  static constexpr bool kEightBit = std::is_same_v<F, Q8_0>;
  static constexpr bool kSuper = std::is_same_v<F, Q4_K>;
  static constexpr bool kFive = std::is_same_v<F, Q5_0> || std::is_same_v<F, Q5_1>;
  static constexpr int kOffset = kFive ? 16 : 8;  // Q4_0: u - 8, Q5_0: u - 16
  using Layout = GroupBlock<kEightBit, F::kHasMin, kFive>;

  // 16 in byte k of lane r where bit `first + k` of lane r's 32 fifth bits is set, else 0:
  // the fifth bits of code group g (first = 4g for the low nibbles, 16 + 4g for the high).
  static __m256i fifth_bits8(__m256i qh, int first) {
    const __m256i shifted = _mm256_srl_epi32(qh, _mm_cvtsi32_si128(first));
    const __m256i spread = _mm256_shuffle_epi8(
        shifted, _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12,  //
                                  0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12));
    const __m256i bit = _mm256_set1_epi32(0x08040201);
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
  }

  static __m256 fp16x8(const std::uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __m256 u8x8(const std::uint8_t* p) {
    return _mm256_cvtepi32_ps(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }

  static void run(const std::uint8_t* group, std::int64_t n_blocks, EncodedRows x, float* out,
                  std::int64_t os) {
    __m256 acc[NT], off[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) acc[t] = off[t] = _mm256_setzero_ps();
    const auto* xs = static_cast<const Q8Block*>(x.data);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    for (std::int64_t b = 0; b < n_blocks; ++b) {
      const std::uint8_t* codes = nullptr;
      __m256i qh = _mm256_setzero_si256();  // Q5_0 / Q5_1: lane r = row r's fifth bits
      __m256 d, min = _mm256_setzero_ps();
      if constexpr (kSuper) {  // Q4_K: d * sc and -(dmin * m) per row, as K4::decode
        const std::uint8_t* sb = group + b / 8 * SuperGroupLayout::kBytes;
        const std::uint8_t* sub =
            sb + SuperGroupLayout::kHeader + b % 8 * SuperGroupLayout::kSubBytes;
        d = _mm256_mul_ps(fp16x8(sb), u8x8(sub));
        min = _mm256_xor_ps(_mm256_mul_ps(fp16x8(sb + 16), u8x8(sub + 8)),
                            _mm256_set1_ps(-0.0f));  // negation, as the portable unary minus
        codes = sub + 16;
      } else {
        const std::uint8_t* blk = group + b * Layout::kBytes;
        codes = blk + Layout::kCodeOffset;
        if constexpr (kFive) qh = load32(blk + Layout::kHighBitsOffset);
        d = fp16x8(blk);
        if constexpr (F::kHasMin) min = fp16x8(blk + 16);
      }
      // Two integer chains per token (p, q: even and odd parts of the block), so a dot
      // product need not wait for the one before it (its latency is 4-5 cycles); the integer
      // sum p + q is exact, so the result does not depend on the split.
      const Q8Block* a[NT];
      __m256i p[NT], q[NT];
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        a[t] = &xs[t * x.stride + b];
        p[t] = q[t] = _mm256_setzero_si256();
        if (!kEightBit && !F::kHasMin) p[t] = _mm256_set1_epi32(-kOffset * a[t]->sum);
#if KVSCOPE_QDOT_VNNI
        if (kEightBit) p[t] = _mm256_set1_epi32(-128 * a[t]->sum);
#endif
      }
      if constexpr (kEightBit) {
#pragma GCC unroll 4
        for (int g = 0; g < 8; g += 2) {
          const __m256i u0 = load32(codes + 32 * g), u1 = load32(codes + 32 * (g + 1));
#if KVSCOPE_QDOT_VNNI
#pragma GCC unroll 4
          for (int t = 0; t < NT; ++t) {
            p[t] = dot_add(p[t], u0, broadcast4(a[t]->q + 4 * g));
            q[t] = dot_add(q[t], u1, broadcast4(a[t]->q + 4 * g + 4));
          }
#else
          const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
          const __m256i w0 = _mm256_xor_si256(u0, bias), w1 = _mm256_xor_si256(u1, bias);
          const __m256i abs_w0 = _mm256_sign_epi8(w0, w0), abs_w1 = _mm256_sign_epi8(w1, w1);
#pragma GCC unroll 4
          for (int t = 0; t < NT; ++t) {
            p[t] = dot_add(p[t], abs_w0, _mm256_sign_epi8(broadcast4(a[t]->q + 4 * g), w0));
            q[t] = dot_add(q[t], abs_w1, _mm256_sign_epi8(broadcast4(a[t]->q + 4 * g + 4), w1));
          }
#endif
        }
      } else {
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
          const __m256i packed = load32(codes + 32 * g);
          __m256i lo = _mm256_and_si256(packed, low4);
          __m256i hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
          if constexpr (kFive) {
            lo = _mm256_or_si256(lo, fifth_bits8(qh, 4 * g));
            hi = _mm256_or_si256(hi, fifth_bits8(qh, 16 + 4 * g));
          }
          add_code_group<NT>(lo, hi, a, g, p, q);
        }
      }
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(p[t], q[t])),
                                 _mm256_mul_ps(d, _mm256_set1_ps(a[t]->d)), acc[t]);
        if (F::kHasMin) off[t] = _mm256_fmadd_ps(min, _mm256_set1_ps(a[t]->s), off[t]);
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
    const __m256i low4m = _mm256_set1_epi8(0x0F), three = _mm256_set1_epi8(0x03);
    for (std::int64_t b = 0; b < n_blocks; ++b) {
      const std::uint8_t* sb = group + b / 8 * Q6GroupLayout::kBytes;
      const std::uint8_t* sub = sb + Q6GroupLayout::kHeader + b % 8 * Q6GroupLayout::kSubBytes;
      const std::uint8_t* low4 = sub + 16;
      const std::uint8_t* high2 = sub + 16 + 128;
      const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sb)));
      const auto scales = [&](int half) {
        const __m128i s8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(sub + 8 * half));
        return _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(s8)));
      };
      const __m256 d0 = scales(0), d1 = scales(1);
      const Q8Block* a[NT];
      __m256i p[NT], q[NT];
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        a[t] = &xs[t * x.stride + b];
        p[t] = _mm256_set1_epi32(-32 * a[t]->sum16);
        q[t] = _mm256_set1_epi32(-32 * (a[t]->sum - a[t]->sum16));
      }
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        const __m256i packed = load32(low4 + 32 * g);
        __m256i h = load32(high2 + 32 * (g / 2));
        if (g % 2) h = _mm256_srli_epi16(h, 4);
        const __m256i lo = _mm256_or_si256(_mm256_and_si256(packed, low4m),
                                           _mm256_slli_epi16(_mm256_and_si256(h, three), 4));
        const __m256i hi =
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(packed, 4), low4m),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), three), 4));
        add_code_group<NT>(lo, hi, a, g, p, q);
      }
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        const __m256 ad = _mm256_set1_ps(a[t]->d);
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p[t]), _mm256_mul_ps(d0, ad), acc[t]);
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(q[t]), _mm256_mul_ps(d1, ad), acc[t]);
      }
    }
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + t * os, acc[t]);
  }
};

}  // namespace
}  // namespace kvscope::quant_dot_detail
