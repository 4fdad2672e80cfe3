// Offset int4, the Int4 K format (kv_format.h): the CPU reference for quantizing a key
// against its block's offsets, reading it back, scoring a query against it and measuring
// its error. The CUDA append and attention kernels reproduce these bytes and values.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "kv/format/code_round.h"
#include "kv/format/group_scales.h"
#include "kv/format/kv_format.h"
#include "kv/format/kv_quantize_sse2.h"
#include "util/half.h"

namespace kvscope {
namespace {

constexpr std::int64_t kMaxGroupSize = 16;
constexpr float kLevels = 15.0f;  // codes 0..15

// fp16_to_float with one predictable branch: a finite half's bits shifted into a float's
// exponent and mantissa, times 2^112 to rebias, is exact for normal and subnormal values
// alike. The score loop converts two per group of every key.
float fp16_value(std::uint16_t h) {
  if ((h & 0x7c00u) == 0x7c00u) return fp16_to_float(h);  // inf, NaN
  const float magnitude = std::bit_cast<float>(static_cast<std::uint32_t>(h & 0x7fffu) << 13);
  const float f = magnitude * 0x1p112f;
  return (h & 0x8000u) ? -f : f;
}

// The code (0..15) of element i.
float load_code(const std::uint8_t* data, std::int64_t i) {
  const unsigned byte = data[i >> 1];
  return static_cast<float>((i & 1) ? (byte >> 4) : (byte & 0x0fu));
}

// Calls f(g, begin, end) for every group [begin, end) of a key, in order.
template <typename F>
void for_each_group(std::int64_t head_dim, F&& f) {
  const std::int64_t group = kv_k4_group_size(head_dim);
  for (std::int64_t begin = 0, g = 0; begin < head_dim; begin += group, ++g) {
    f(g, begin, std::min(begin + group, head_dim));
  }
}

// An offset as stored (fp16 bits) or already decoded (float, once per block).
float offset_value(std::uint16_t o) {
  return fp16_to_float(o);
}
float offset_value(float o) {
  return o;
}

// Calls f(i, value) for every stored value (o + m) + s * code, in order, reading each byte
// of codes once (low nibble first): the one read path of dequantize and the error
// measurement (the CUDA kernels add in the same order).
template <typename Offset, typename F>
void visit_k4(const std::uint8_t* data, const std::uint16_t* scales, const Offset* offsets,
              std::int64_t head_dim, F&& f) {
  for_each_group(head_dim, [&](std::int64_t g, std::int64_t begin, std::int64_t end) {
    const float s = fp16_to_float(scales[2 * g]);
    const float m = fp16_to_float(scales[2 * g + 1]);
    auto value = [&](std::int64_t i, float code) {
      f(i, (offset_value(offsets[i]) + m) + s * code);
    };
    std::int64_t i = begin;
    if (i < end && (i & 1)) {
      value(i, load_code(data, i));
      ++i;
    }
    for (; i + 1 < end; i += 2) {
      const unsigned byte = data[i >> 1];
      value(i, static_cast<float>(byte & 0x0fu));
      value(i + 1, static_cast<float>(byte >> 4));
    }
    if (i < end) value(i, load_code(data, i));
  });
}

// sum over [begin, end) of q[i] * code_i, two codes per byte.
float dot_codes(const float* q, const std::uint8_t* data, std::int64_t begin, std::int64_t end) {
  float acc = 0.0f;
  std::int64_t i = begin;
  if (i < end && (i & 1)) {
    acc += q[i] * static_cast<float>(data[i >> 1] >> 4);
    ++i;
  }
  for (; i + 1 < end; i += 2) {
    const unsigned byte = data[i >> 1];
    acc += q[i] * static_cast<float>(byte & 0x0fu);
    acc += q[i + 1] * static_cast<float>(byte >> 4);
  }
  if (i < end) acc += q[i] * static_cast<float>(data[i >> 1] & 0x0fu);
  return acc;
}

}  // namespace

std::int64_t kv_k4_group_size(std::int64_t head_dim) {
  return std::min(kMaxGroupSize, std::max<std::int64_t>(1, (head_dim + 1) / 2));
}

void kv_k4_set_offsets(const float* x, std::int64_t head_dim, std::uint16_t* offsets) {
  if (kv_sse2::store_f16(x, head_dim, reinterpret_cast<std::uint8_t*>(offsets))) return;
  for (std::int64_t i = 0; i < head_dim; ++i) offsets[i] = float_to_fp16(x[i]);
}

void kv_k4_quantize(const float* x, const std::uint16_t* offsets, std::int64_t head_dim,
                    std::uint8_t* data, std::uint16_t* scales) {
  if (!kv_sse2::k4_quantize(x, offsets, head_dim, data, scales)) {
    kv_k4_quantize_portable(x, offsets, head_dim, data, scales);
  }
}

void kv_k4_quantize_portable(const float* x, const std::uint16_t* offsets, std::int64_t head_dim,
                             std::uint8_t* data, std::uint16_t* scales) {
  std::memset(data, 0, static_cast<std::size_t>(kv_data_bytes_per_vector(KvDtype::Int4, head_dim)));
  for_each_group(head_dim, [&](std::int64_t g, std::int64_t begin, std::int64_t end) {
    // the residuals' range; NaN compares false and is skipped
    float lo = std::numeric_limits<float>::infinity();
    float hi = -lo;
    for (std::int64_t i = begin; i < end; ++i) {
      const float r = x[i] - fp16_to_float(offsets[i]);
      if (r < lo) lo = r;
      if (r > hi) hi = r;
    }
    kv_k4_group_scales(lo, hi, &scales[2 * g], &scales[2 * g + 1]);
    // codes use the stored (fp16) s and m, so the grid is the one dequantize sees
    const float s = fp16_to_float(scales[2 * g]);
    const float m = fp16_to_float(scales[2 * g + 1]);
    const float inv = s > 0.0f ? 1.0f / s : 0.0f;
    for (std::int64_t i = begin; i < end; ++i) {
      const float r = x[i] - fp16_to_float(offsets[i]);
      const auto code =
          static_cast<unsigned>(code_round(code_clamp((r - m) * inv, 0.0f, kLevels)));  // NaN -> 0
      data[i >> 1] = static_cast<std::uint8_t>(data[i >> 1] | (code << ((i & 1) * 4)));
    }
  });
}

void kv_k4_dequantize(const std::uint8_t* data, const std::uint16_t* scales,
                      const std::uint16_t* offsets, std::int64_t head_dim, float* out) {
  visit_k4(data, scales, offsets, head_dim, [out](std::int64_t i, float v) { out[i] = v; });
}

void kv_k4_dequantize(const std::uint8_t* data, const std::uint16_t* scales, const float* offsets,
                      std::int64_t head_dim, float* out) {
  visit_k4(data, scales, offsets, head_dim, [out](std::int64_t i, float v) { out[i] = v; });
}

void kv_k4_scaled_codes(const std::uint8_t* data, const std::uint16_t* scales,
                        std::int64_t head_dim, float* out) {
  for_each_group(head_dim, [&](std::int64_t g, std::int64_t begin, std::int64_t end) {
    const float s = fp16_to_float(scales[2 * g]);
    for (std::int64_t i = begin; i < end; ++i) out[i] = s * static_cast<float>(load_code(data, i));
  });
}

std::int64_t kv_k4_query_terms_size(std::int64_t head_dim) {
  return 1 + kv_scales_per_vector(KvSide::K, KvDtype::Int4, head_dim) / 2;
}

void kv_k4_query_terms(const float* q, const std::uint16_t* offsets, std::int64_t head_dim,
                       float* q_terms) {
  float q_dot_o = 0.0f;
  for (std::int64_t i = 0; i < head_dim; ++i) q_dot_o += q[i] * fp16_to_float(offsets[i]);
  q_terms[0] = q_dot_o;
  for_each_group(head_dim, [&](std::int64_t g, std::int64_t begin, std::int64_t end) {
    float sum = 0.0f;
    for (std::int64_t i = begin; i < end; ++i) sum += q[i];
    q_terms[1 + g] = sum;
  });
}

float kv_k4_dot(const float* q, const float* q_terms, const std::uint8_t* data,
                const std::uint16_t* scales, std::int64_t head_dim) {
  const std::int64_t group = kv_k4_group_size(head_dim);
  float sum = q_terms[0];
  if (group % 2 == 0) {
    // groups start on a byte: two codes per byte, two accumulators; an odd head_dim leaves
    // the last byte one code
    const std::int64_t bytes_per_group = group / 2;
    const std::int64_t n_bytes = (head_dim + 1) / 2, n_full = head_dim / 2;
    for (std::int64_t b0 = 0, g = 0; b0 < n_bytes; b0 += bytes_per_group, ++g) {
      const std::int64_t b1 = std::min(b0 + bytes_per_group, n_full);
      float lo = 0.0f, hi = 0.0f;
      for (std::int64_t b = b0; b < b1; ++b) {
        lo += q[2 * b] * static_cast<float>(data[b] & 0x0fu);
        hi += q[2 * b + 1] * static_cast<float>(data[b] >> 4);
      }
      if (b0 + bytes_per_group > n_full && n_full < n_bytes) {
        lo += q[2 * n_full] * static_cast<float>(data[n_full] & 0x0fu);
      }
      sum += fp16_value(scales[2 * g + 1]) * q_terms[1 + g] + fp16_value(scales[2 * g]) * (lo + hi);
    }
    return sum;
  }
  for_each_group(head_dim, [&](std::int64_t g, std::int64_t begin, std::int64_t end) {
    sum += fp16_value(scales[2 * g + 1]) * q_terms[1 + g] +
           fp16_value(scales[2 * g]) * dot_codes(q, data, begin, end);
  });
  return sum;
}

double kv_k4_sq_error(const float* x, const std::uint8_t* data, const std::uint16_t* scales,
                      const std::uint16_t* offsets, std::int64_t head_dim) {
  float stored[kv_sse2::kMaxHeadDim];
  if (head_dim <= kv_sse2::kMaxHeadDim &&
      kv_sse2::k4_dequantize(data, scales, offsets, head_dim, stored)) {
    return kv_sq_error_of(x, stored, head_dim);
  }
  double sum = 0.0;
  visit_k4(data, scales, offsets, head_dim, [x, &sum](std::int64_t i, float v) {
    const double d = static_cast<double>(x[i]) - static_cast<double>(v);
    sum += d * d;
  });
  return sum;
}

}  // namespace kvscope
