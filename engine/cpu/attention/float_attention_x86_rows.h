// Rows of the paged KV cache as the x86 float attention reads them (float_attention_x86.h,
// compiled with its flags): stored fp16, int8 and int4 vectors decoded into float rows
// zero-padded to the row length, with the row lengths the kernels unroll for. Included by
// float_attention_x86.h only, once per instruction set.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cpu/attention/float_attention_simd.h"
#include "cpu/x86_vec.h"
#include "kv/format/kv_format.h"
#include "util/half.h"

namespace kvscope::float_attention_detail {
namespace {

using namespace kvscope::x86;  // NOLINT(google-build-using-namespace)

// The kernels below take the row length as a template argument where it is one of the common
// head sizes (kRow: 64 or 128 floats; 0: only known at run time, `row`). A known length turns
// the loops over a row into straight code: at a run-time length the loop counters cost as
// much as the arithmetic, and the accumulator array of `accumulate` lived in memory. The
// operations and their order are the same either way, so are the bits.
template <std::int64_t kRow>
KVSCOPE_X86_INLINE std::int64_t row_length(std::int64_t row) {
  return kRow > 0 ? kRow : row;
}

// f(std::integral_constant<std::int64_t, N>{}) with N = n where n is one of the unrolled
// lengths (64, 128), else N = 0 (the run-time versions): each kernel's one dispatch.
template <typename F>
KVSCOPE_X86_INLINE decltype(auto) with_length(std::int64_t n, F&& f) {
  switch (n) {
    case 64:
      return f(std::integral_constant<std::int64_t, 64>{});
    case 128:
      return f(std::integral_constant<std::int64_t, 128>{});
    default:
      return f(std::integral_constant<std::int64_t, 0>{});
  }
}

template <std::int64_t kHd>
void rows_from_f16_of(const std::uint16_t* src, std::int64_t stride, std::int64_t n,
                      std::int64_t hd_rt, std::int64_t row, float* dst) {
  const std::int64_t hd = row_length<kHd>(hd_rt);
  for (std::int64_t j = 0; j < n; ++j, src += stride, dst += row) {
    std::int64_t i = 0;
    for (; i + kLanes <= hd; i += kLanes) _mm256_storeu_ps(dst + i, f16x8_to_float(src + i));
    for (; i < hd; ++i) dst[i] = fp16_to_float(src[i]);
    for (; i < row; ++i) dst[i] = 0.0f;
  }
}

void rows_from_f16(const std::uint16_t* src, std::int64_t stride, std::int64_t n, std::int64_t hd,
                   std::int64_t row, float* dst) {
  with_length(hd, [&](auto len) { rows_from_f16_of<len()>(src, stride, n, hd, row, dst); });
}

// The fp16 scales of one vector as floats, 8 at a time: count <= kMaxScales scales, of which
// `readable` (>= count) may be read; when a whole 8 (16) cannot be read they are copied first.
constexpr std::int64_t kMaxScales = 16;
void scales_to_float(const std::uint16_t* scales, std::int64_t count, std::int64_t readable,
                     float* out) {
  const std::int64_t loads = count > kLanes ? 2 : 1;
  if (readable >= loads * kLanes) {
    for (std::int64_t l = 0; l < loads; ++l) {
      _mm256_storeu_ps(out + l * kLanes, f16x8_to_float(scales + l * kLanes));
    }
    return;
  }
  alignas(16) std::uint16_t h[kMaxScales] = {};
  std::memcpy(h, scales, static_cast<std::size_t>(count) * sizeof(std::uint16_t));
  for (std::int64_t l = 0; l < loads; ++l) {
    _mm256_storeu_ps(out + l * kLanes, f16x8_to_float(h + l * kLanes));
  }
}

// 16 codes of 8 bytes, low nibble first, as two vectors of 8 floats (in registers: the codes
// used to go through memory, a store and two reloads per 16 values).
KVSCOPE_X86_INLINE void nibbles16_to_float(const std::uint8_t* bytes, __m256& first,
                                           __m256& second) {
  const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes));
  const __m128i mask = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_and_si128(x, mask);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), mask);
  const __m128i codes = _mm_unpacklo_epi8(lo, hi);  // [lo0, hi0, lo1, hi1, ...]
  first = u8x8_reg_to_float(codes);
  second = u8x8_reg_to_float(_mm_srli_si128(codes, 8));
}

// One group [begin, end) of a vector: kv_dequantize's Int8 / Int4 values (s * q) or
// kv_k4_scaled_codes' (s * code). 16 values at a time from a byte-aligned int4 group, else 8,
// else (a group size not a multiple of 8) one by one with the same operations.
void group_from_quantized(bool k4, KvDtype dtype, const std::uint8_t* data, float s,
                          std::int64_t begin, std::int64_t end, float* out) {
  const __m256 sv = _mm256_set1_ps(s), eight = _mm256_set1_ps(8.0f);
  // int4 code(s) -> values; nibble - 8 is exact in float
  const auto int4_values = [&](__m256 codes) {
    return k4 ? _mm256_mul_ps(sv, codes) : _mm256_mul_ps(sv, _mm256_sub_ps(codes, eight));
  };
  std::int64_t i = begin;
  if (dtype == KvDtype::Int8) {
    for (; i + kLanes <= end; i += kLanes) {
      _mm256_storeu_ps(out + i, _mm256_mul_ps(sv, s8x8_to_float(data + i)));
    }
  } else {
    if (i % 2 == 0) {
      for (; i + 2 * kLanes <= end; i += 2 * kLanes) {
        __m256 first, second;
        nibbles16_to_float(data + i / 2, first, second);
        _mm256_storeu_ps(out + i, int4_values(first));
        _mm256_storeu_ps(out + i + kLanes, int4_values(second));
      }
    }
    for (; i + kLanes <= end; i += kLanes) {
      _mm256_storeu_ps(out + i, int4_values(nibbles8_to_float(data, i)));
    }
  }
  for (; i < end; ++i) {
    if (dtype == KvDtype::Int8) {
      out[i] = s * static_cast<float>(static_cast<std::int8_t>(data[i]));
      continue;
    }
    const int nibble = (data[i / 2] >> (4 * (i & 1))) & 0x0f;
    out[i] = s * static_cast<float>(k4 ? nibble : nibble - 8);
  }
}

// kCount fp16 scales (2, 4, 8 or 16) as floats, reading only those: out [max(kCount, 8)].
template <int kCount>
KVSCOPE_X86_INLINE void scales_exact(const std::uint16_t* scales, float* out) {
  if constexpr (kCount >= kLanes) {
    for (int l = 0; l < kCount; l += kLanes) _mm256_store_ps(out + l, f16x8_to_float(scales + l));
  } else if constexpr (kCount == 4) {
    _mm256_store_ps(out, f16x8_reg_to_float(_mm_loadl_epi64(
                             reinterpret_cast<const __m128i*>(scales))));  // the upper 4: 0
  } else {
    static_assert(kCount == 2);
    std::int32_t two = 0;
    std::memcpy(&two, scales, sizeof(two));
    _mm256_store_ps(out, f16x8_reg_to_float(_mm_cvtsi32_si128(two)));
  }
}

// Int4 rows of the common head sizes (kHd 64 or 128; row == kHd): offset-int4 keys in groups
// of 16 (kK4), values in groups of 32. group_from_quantized's operations, the loops unrolled:
// with the group loops run at run time their counters cost more than the decoding. n vectors
// at data + j * data_stride, scales + j * scales_stride; out [n][kHd]; key_terms (kK4, may
// be nullptr) [n][2 * kHd / 16].
template <bool kK4, std::int64_t kHd>
void int4_rows(const std::uint8_t* data, std::int64_t data_stride, const std::uint16_t* scales,
               std::int64_t scales_stride, std::int64_t n, float* out, float* key_terms) {
  constexpr std::int64_t kGroup = kK4 ? 16 : 32;
  constexpr int kScales = static_cast<int>(kK4 ? 2 * kHd / kGroup : kHd / kGroup);
  const __m256 eight = _mm256_set1_ps(8.0f);
  for (std::int64_t j = 0; j < n; ++j, data += data_stride, scales += scales_stride, out += kHd) {
    alignas(32) float sf[kScales < kLanes ? kLanes : kScales];
    scales_exact<kScales>(scales, sf);
    if (kK4 && key_terms != nullptr) {
      for (int l = 0; l < kScales; l += kLanes) {
        _mm256_storeu_ps(key_terms + j * kScales + l, _mm256_load_ps(sf + l));
      }
    }
#pragma GCC unroll 8
    for (std::int64_t i = 0; i < kHd; i += 2 * kLanes) {
      const __m256 sv = _mm256_set1_ps(sf[kK4 ? 2 * (i / kGroup) : i / kGroup]);
      __m256 codes[2];
      nibbles16_to_float(data + i / 2, codes[0], codes[1]);
      for (int h = 0; h < 2; ++h) {
        const __m256 value =
            kK4 ? _mm256_mul_ps(sv, codes[h]) : _mm256_mul_ps(sv, _mm256_sub_ps(codes[h], eight));
        _mm256_storeu_ps(out + i + h * kLanes, value);
      }
    }
  }
}

// int4_rows for the side and head size, when it has one (true) for them.
bool int4_rows_for(KvSide side, std::int64_t hd, std::int64_t row, const std::uint8_t* data,
                   std::int64_t data_stride, const std::uint16_t* scales,
                   std::int64_t scales_stride, std::int64_t n, float* out, float* key_terms) {
  const bool k4 = side == KvSide::K;
  if (row != hd || kv_group_size(side, KvDtype::Int4, hd) != (k4 ? 16 : 32)) return false;
  return with_length(hd, [&](auto len) {
    if constexpr (len() == 0) {
      return false;
    } else {
      if (k4) {
        int4_rows<true, len()>(data, data_stride, scales, scales_stride, n, out, key_terms);
      } else {
        int4_rows<false, len()>(data, data_stride, scales, scales_stride, n, out, key_terms);
      }
      return true;
    }
  });
}

// Int8 rows of the common head sizes (kHd 64 or 128; row == kHd; groups of 32, either side):
// group_from_quantized's s * code, the loops unrolled as int4_rows'.
template <std::int64_t kHd>
void int8_rows(const std::uint8_t* data, std::int64_t data_stride, const std::uint16_t* scales,
               std::int64_t scales_stride, std::int64_t n, float* out) {
  constexpr std::int64_t kGroup = 32;
  constexpr int kScales = static_cast<int>(kHd / kGroup);
  for (std::int64_t j = 0; j < n; ++j, data += data_stride, scales += scales_stride, out += kHd) {
    alignas(32) float sf[kLanes];
    scales_exact<kScales>(scales, sf);
#pragma GCC unroll 16
    for (std::int64_t i = 0; i < kHd; i += kLanes) {
      _mm256_storeu_ps(out + i,
                       _mm256_mul_ps(_mm256_set1_ps(sf[i / kGroup]), s8x8_to_float(data + i)));
    }
  }
}

// int8_rows for the head size, when it has one (true).
bool int8_rows_for(KvSide side, std::int64_t hd, std::int64_t row, const std::uint8_t* data,
                   std::int64_t data_stride, const std::uint16_t* scales,
                   std::int64_t scales_stride, std::int64_t n, float* out) {
  if (row != hd || kv_group_size(side, KvDtype::Int8, hd) != 32) return false;
  return with_length(hd, [&](auto len) {
    if constexpr (len() == 0) {
      return false;
    } else {
      int8_rows<len()>(data, data_stride, scales, scales_stride, n, out);
      return true;
    }
  });
}

// An offset-int4 key's row of KeyTerms::key: its scales as floats, zero padded to `width`.
// sf: the scales converted (n_scales <= kMaxScales), else read from `scales`.
KVSCOPE_X86_INLINE void store_key_terms(const float* sf, const std::uint16_t* scales,
                                        std::int64_t n_scales, std::int64_t width, float* out) {
  if (n_scales == width && n_scales <= kMaxScales) {
    for (std::int64_t i = 0; i < width; i += kLanes) {
      _mm256_storeu_ps(out + i, _mm256_load_ps(sf + i));
    }
    return;
  }
  for (std::int64_t k = 0; k < n_scales; ++k) {
    out[k] = n_scales <= kMaxScales ? sf[k] : fp16_to_float(scales[k]);
  }
  std::fill(out + n_scales, out + width, 0.0f);
}

// float_attention_rows_from_quantized for group sizes that are a multiple of 8: n vectors,
// each one's scales converted 8 at a time (when there are at most kMaxScales) and its
// groups decoded by group_from_quantized.
void rows_from_quantized(KvSide side, KvDtype dtype, const std::uint8_t* data,
                         std::int64_t data_stride, const std::uint16_t* scales,
                         std::int64_t scales_stride, std::int64_t n, std::int64_t hd,
                         std::int64_t row, float* out, float* key_terms) {
  if (dtype == KvDtype::Int4 &&
      int4_rows_for(side, hd, row, data, data_stride, scales, scales_stride, n, out, key_terms)) {
    return;
  }
  if (dtype == KvDtype::Int8 &&
      int8_rows_for(side, hd, row, data, data_stride, scales, scales_stride, n, out)) {
    return;
  }
  const bool k4 = side == KvSide::K && dtype == KvDtype::Int4;
  const std::int64_t group = kv_group_size(side, dtype, hd);
  const std::int64_t n_scales = kv_scales_per_vector(side, dtype, hd);
  const std::int64_t width = float_attention_key_terms_width(hd);
  // the scales of vectors [j, n) span (n - 1 - j) * scales_stride + n_scales halves (the slots
  // of a block store them one after another: scales_stride == n_scales)
  const std::int64_t span = (n - 1) * scales_stride + n_scales;
  alignas(32) float sf[kMaxScales];
  for (std::int64_t j = 0; j < n; ++j, data += data_stride, scales += scales_stride, out += row) {
    std::fill(out + hd, out + row, 0.0f);
    if (n_scales <= kMaxScales) scales_to_float(scales, n_scales, span - j * scales_stride, sf);
    if (k4 && key_terms != nullptr)
      store_key_terms(sf, scales, n_scales, width, key_terms + j * width);
    const auto scale = [&](std::int64_t k) {
      return n_scales <= kMaxScales ? sf[k] : fp16_to_float(scales[k]);
    };
    for (std::int64_t begin = 0, g = 0; begin < hd; begin += group, ++g) {
      group_from_quantized(k4, dtype, data, scale(k4 ? 2 * g : g), begin,
                           std::min(begin + group, hd), out);
    }
  }
}

}  // namespace
}  // namespace kvscope::float_attention_detail
