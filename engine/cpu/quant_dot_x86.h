// The x86 kernels of quant_dot.h, written once for 256-bit vectors and compiled twice:
// quant_dot_avx2.cpp (AVX2 + FMA + F16C: the integer dot of 4 u8 x s8 products is
// maddubs + madd) and quant_dot_avx512.cpp (AVX-512 VL + VNNI: one vpdpbusd). Each of those
// files sets the target flags and includes this header once; nothing else includes it.
//
// Lane for lane the same arithmetic as quant_dot_portable.cpp (which explains it), so the
// results are the same bits. Register shapes, per 32-value block:
//   codes  __m256i: 32 bytes, value i in byte i (unsigned u, or signed w for formats
//                   without a minimum)
//   p      __m256i: 8 int32 lanes, lane j = sum of values 4j .. 4j+3 times their codes
//   scale  __m256 : the weight's scale of each lane (one value, or Q6_K's two groups of 16)
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu/quant_dot.h"
#include "quant/quant_blocks.h"
#include "util/half.h"

namespace kvscope::quant_dot_detail {
namespace {

using quants::BlockQ4_0;
using quants::BlockQ4_1;
using quants::BlockQ4_K;
using quants::BlockQ5_0;
using quants::BlockQ5_1;
using quants::BlockQ5_K;
using quants::BlockQ6_K;
using quants::BlockQ8_0;
using quants::kQK_K;

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

template <int NT>
struct Tile {
  __m256 acc[NT][2];
  float off[NT];
  const Q8Block* x[NT];

  explicit Tile(EncodedRows rows) {
    for (int t = 0; t < NT; ++t) {
      acc[t][0] = acc[t][1] = _mm256_setzero_ps();
      off[t] = 0.0f;
      x[t] = static_cast<const Q8Block*>(rows.data) + t * rows.stride;
    }
  }

  // Block `index` (its parity picks the chain; callers pass it as a constant) with signed
  // codes w, or unsigned codes u and a minimum.
  template <int kChain, bool kHasMin>
  void add(__m256i codes, __m256 scale, float min, std::int64_t index) {
    const __m256i abs_w = kHasMin ? codes : _mm256_sign_epi8(codes, codes);
    for (int t = 0; t < NT; ++t) {
      const Q8Block& a = x[t][index];
      const __m256i q = load32(a.q);
      const __m256i p = kHasMin ? dot_u8s8(codes, q) : dot_u8s8(abs_w, _mm256_sign_epi8(q, codes));
      const __m256 sd = _mm256_mul_ps(scale, _mm256_set1_ps(a.d));
      acc[t][kChain] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), sd, acc[t][kChain]);
      if (kHasMin) off[t] = std::fma(min, a.s, off[t]);
    }
  }

  void store(float* out, std::int64_t out_stride) const {
    for (int t = 0; t < NT; ++t) {
      out[t * out_stride] = hsum8(_mm256_add_ps(acc[t][0], acc[t][1])) + off[t];
    }
  }
};

// --- legacy formats: one 32-value block, one scale ---------------------------------------

struct Q4_0 {
  using Block = BlockQ4_0;
  static constexpr bool kHasMin = false;
  static __m256i codes(const Block& b) {
    return _mm256_sub_epi8(nibbles16(b.qs), _mm256_set1_epi8(8));
  }
  static float min(const Block&) { return 0.0f; }
};
struct Q4_1 {
  using Block = BlockQ4_1;
  static constexpr bool kHasMin = true;
  static __m256i codes(const Block& b) { return nibbles16(b.qs); }
  static float min(const Block& b) { return f16(b.m); }
};
struct Q5_0 {
  using Block = BlockQ5_0;
  static constexpr bool kHasMin = false;
  static __m256i codes(const Block& b) {
    const __m256i u = _mm256_or_si256(nibbles16(b.qs), fifth_bits(b.qh));
    return _mm256_sub_epi8(u, _mm256_set1_epi8(16));
  }
  static float min(const Block&) { return 0.0f; }
};
struct Q5_1 {
  using Block = BlockQ5_1;
  static constexpr bool kHasMin = true;
  static __m256i codes(const Block& b) {
    return _mm256_or_si256(nibbles16(b.qs), fifth_bits(b.qh));
  }
  static float min(const Block& b) { return f16(b.m); }
};
struct Q8_0 {
  using Block = BlockQ8_0;
  static constexpr bool kHasMin = false;
  static __m256i codes(const Block& b) { return load32(b.qs); }
  static float min(const Block&) { return 0.0f; }
};

template <class F, int kChain, int NT>
inline void add_legacy(Tile<NT>& tile, const typename F::Block& b, std::int64_t i) {
  tile.template add<kChain, F::kHasMin>(F::codes(b), _mm256_set1_ps(f16(b.d)), F::min(b), i);
}

template <class F, int NT>
void legacy_tile(const void* row, std::int64_t n, EncodedRows x, float* out, std::int64_t os) {
  const auto* blocks = static_cast<const typename F::Block*>(row);
  const std::int64_t n_blocks = n / 32;
  Tile<NT> tile(x);
  std::int64_t i = 0;
  for (; i + 2 <= n_blocks; i += 2) {
    add_legacy<F, 0>(tile, blocks[i], i);
    add_legacy<F, 1>(tile, blocks[i + 1], i + 1);
  }
  if (i < n_blocks) add_legacy<F, 0>(tile, blocks[i], i);
  tile.store(out, os);
}

// --- K formats: super-blocks of 256 ------------------------------------------------------

// Q4_K / Q5_K: sub-block j = 2c + h takes the h-th nibble of qs[32c .. 32c+31] (and bit j of
// qh[0..31] for Q5_K); scale d*sc[j], minimum -dmin*m[j].
template <class B, int NT>
void k4_tile(const void* row, std::int64_t n, EncodedRows x, float* out, std::int64_t os) {
  constexpr bool kFive = std::is_same_v<B, BlockQ5_K>;
  const auto* blocks = static_cast<const B*>(row);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  Tile<NT> tile(x);
  for (std::int64_t i = 0; i < n / kQK_K; ++i) {
    const B& b = blocks[i];
    const float d = f16(b.d), dmin = f16(b.dmin);
    float scale[8], min[8];
    for (int j = 0; j < 8; ++j) {
      std::uint8_t sc = 0, m = 0;
      quants::scale_min_k4(j, b.scales, sc, m);
      scale[j] = d * static_cast<float>(sc);
      min[j] = -(dmin * static_cast<float>(m));
    }
    [[maybe_unused]] __m256i qh = _mm256_setzero_si256();
    if constexpr (kFive) qh = load32(b.qh);
    for (int c = 0; c < 4; ++c) {
      const __m256i packed = load32(b.qs + 32 * c);
      __m256i u0 = _mm256_and_si256(packed, low4);
      __m256i u1 = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
      if constexpr (kFive) {
        const __m256i b0 = _mm256_set1_epi8(static_cast<char>(1 << (2 * c)));
        const __m256i b1 = _mm256_set1_epi8(static_cast<char>(1 << (2 * c + 1)));
        const __m256i sixteen = _mm256_set1_epi8(0x10);
        u0 = _mm256_or_si256(
            u0, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, b0), b0), sixteen));
        u1 = _mm256_or_si256(
            u1, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, b1), b1), sixteen));
      }
      const int j = 2 * c;
      tile.template add<0, true>(u0, _mm256_set1_ps(scale[j]), min[j], 8 * i + j);
      tile.template add<1, true>(u1, _mm256_set1_ps(scale[j + 1]), min[j + 1], 8 * i + j + 1);
    }
  }
  tile.store(out, os);
}

// Q6_K: per half of 128 values, blocks of 32 from ql[0..31] / ql[32..63] low and high
// nibbles with 2 bits each of qh[0..31]; codes recentred by -32; lanes 0-3 and 4-7 of a
// block are its two groups of 16 with their own scales.
template <int NT>
void q6_K_t(const void* row, std::int64_t n, EncodedRows x, float* out, std::int64_t os) {
  const auto* blocks = static_cast<const BlockQ6_K*>(row);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i m3 = _mm256_set1_epi8(0x03), m12 = _mm256_set1_epi8(0x0C);
  const __m256i m48 = _mm256_set1_epi8(0x30), m32 = _mm256_set1_epi8(32);
  Tile<NT> tile(x);
  for (std::int64_t i = 0; i < n / kQK_K; ++i) {
    const BlockQ6_K& b = blocks[i];
    const float d = f16(b.d);
    auto scale = [&](int j) {
      return _mm256_set_m128(_mm_set1_ps(d * static_cast<float>(b.scales[2 * j + 1])),
                             _mm_set1_ps(d * static_cast<float>(b.scales[2 * j])));
    };
    for (int h = 0; h < 2; ++h) {
      const __m256i ql0 = load32(b.ql + 64 * h), ql1 = load32(b.ql + 64 * h + 32);
      const __m256i qh = load32(b.qh + 32 * h);
      const __m256i w0 = _mm256_or_si256(_mm256_and_si256(ql0, low4),
                                         _mm256_slli_epi16(_mm256_and_si256(qh, m3), 4));
      const __m256i w1 = _mm256_or_si256(_mm256_and_si256(ql1, low4),
                                         _mm256_slli_epi16(_mm256_and_si256(qh, m12), 2));
      const __m256i w2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                                         _mm256_and_si256(qh, m48));
      const __m256i w3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                                         _mm256_and_si256(_mm256_srli_epi16(qh, 2), m48));
      const int j = 4 * h;
      const std::int64_t at = 8 * i + j;
      tile.template add<0, false>(_mm256_sub_epi8(w0, m32), scale(j), 0.0f, at);
      tile.template add<1, false>(_mm256_sub_epi8(w1, m32), scale(j + 1), 0.0f, at + 1);
      tile.template add<0, false>(_mm256_sub_epi8(w2, m32), scale(j + 2), 0.0f, at + 2);
      tile.template add<1, false>(_mm256_sub_epi8(w3, m32), scale(j + 3), 0.0f, at + 3);
    }
  }
  tile.store(out, os);
}

// --- F16 / BF16 ---------------------------------------------------------------------------

inline __m256 load_f16x8(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 load_bf16x8(const std::uint16_t* p) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

template <bool kBf16, int NT>
void half_tile(const void* row, std::int64_t n, EncodedRows x, float* out, std::int64_t os) {
  const auto* w = static_cast<const std::uint16_t*>(row);
  auto load = [](const std::uint16_t* p) { return kBf16 ? load_bf16x8(p) : load_f16x8(p); };
  auto to_float = [](std::uint16_t h) {
    return kBf16 ? bf16_to_float(h) : quants::fp16_to_float_branchless(h);
  };
  for (int t = 0; t < NT; ++t) {
    const auto* a = static_cast<const std::uint16_t*>(x.data) + t * x.stride;
    __m256 acc = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(load(w + i), load(a + i), acc);
    float tail = 0.0f;
    for (; i < n; ++i) tail = std::fma(to_float(w[i]), to_float(a[i]), tail);
    out[t * os] = hsum8(acc) + tail;
  }
}

template <int NT>
void q4_0_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  legacy_tile<Q4_0, NT>(r, n, x, o, os);
}
template <int NT>
void q4_1_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  legacy_tile<Q4_1, NT>(r, n, x, o, os);
}
template <int NT>
void q5_0_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  legacy_tile<Q5_0, NT>(r, n, x, o, os);
}
template <int NT>
void q5_1_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  legacy_tile<Q5_1, NT>(r, n, x, o, os);
}
template <int NT>
void q8_0_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  legacy_tile<Q8_0, NT>(r, n, x, o, os);
}
template <int NT>
void q4_K_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  k4_tile<BlockQ4_K, NT>(r, n, x, o, os);
}
template <int NT>
void q5_K_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  k4_tile<BlockQ5_K, NT>(r, n, x, o, os);
}
template <int NT>
void f16_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  half_tile<false, NT>(r, n, x, o, os);
}
template <int NT>
void bf16_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  half_tile<true, NT>(r, n, x, o, os);
}

}  // namespace
}  // namespace kvscope::quant_dot_detail
