#include "kv/format/kv_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <string>

#include "kv/format/code_round.h"
#include "kv/format/group_scales.h"
#include "kv/format/kv_quantize_sse2.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {
namespace {

constexpr std::int64_t kMaxGroupSize = 32;
constexpr float kInt8Max = 127.0f;
constexpr float kInt4Max = 7.0f;
constexpr int kInt4Offset = 8;  // nibble = q + 8

float load_f16(const std::uint8_t* data, std::int64_t i) {
  std::uint16_t h = 0;
  std::memcpy(&h, data + 2 * i, sizeof h);
  return fp16_to_float(h);
}

void store_f16(std::uint8_t* data, std::int64_t i, float x) {
  const std::uint16_t h = float_to_fp16(x);
  std::memcpy(data + 2 * i, &h, sizeof h);
}

int load_int4(const std::uint8_t* data, std::int64_t i) {
  const unsigned byte = data[i >> 1];
  const unsigned nibble = (i & 1) ? (byte >> 4) : (byte & 0x0fu);
  return static_cast<int>(nibble) - kInt4Offset;
}

// Calls f(i, value) for every dequantized element of one vector, in order. The one
// dtype switch every read path (dequantize, dot, axpy, error) goes through.
template <typename F>
void visit_dequantized(KvDtype dtype, const std::uint8_t* data, const std::uint16_t* scales,
                       std::int64_t head_dim, F&& f) {
  if (dtype == KvDtype::F16) {
    for (std::int64_t i = 0; i < head_dim; ++i) f(i, load_f16(data, i));
    return;
  }
  const std::int64_t group = kv_group_size(head_dim);
  for (std::int64_t begin = 0, g = 0; begin < head_dim; begin += group, ++g) {
    const float s = fp16_to_float(scales[g]);
    const std::int64_t end = std::min(begin + group, head_dim);
    if (dtype == KvDtype::Int8) {
      for (std::int64_t i = begin; i < end; ++i) {
        f(i, s * static_cast<float>(static_cast<std::int8_t>(data[i])));
      }
    } else {  // two values per byte, low nibble first
      std::int64_t i = begin;
      if (i < end && (i & 1)) {
        f(i, s * static_cast<float>(load_int4(data, i)));
        ++i;
      }
      for (; i + 1 < end; i += 2) {
        const unsigned byte = data[i >> 1];
        f(i, s * static_cast<float>(static_cast<int>(byte & 0x0fu) - kInt4Offset));
        f(i + 1, s * static_cast<float>(static_cast<int>(byte >> 4) - kInt4Offset));
      }
      if (i < end) f(i, s * static_cast<float>(load_int4(data, i)));
    }
  }
}

// Symmetric per-group quantization: writes one fp16 scale per group and calls
// store(i, q) with q in [-qmax, qmax]. q uses the fp16-rounded scale so that the
// reconstruction error is at most half a step. NaN inputs do not raise the scale and
// quantize to -qmax; a scale that rounds to 0 (tiny values) quantizes the group to 0.
template <typename Store>
void quantize_groups(const float* x, std::int64_t head_dim, float qmax, std::uint16_t* scales,
                     Store&& store) {
  const std::int64_t group = kv_group_size(head_dim);
  for (std::int64_t begin = 0, g = 0; begin < head_dim; begin += group, ++g) {
    const std::int64_t end = std::min(begin + group, head_dim);
    float amax = 0.0f;
    for (std::int64_t i = begin; i < end; ++i) {
      const float a = std::fabs(x[i]);
      if (a > amax) amax = a;
    }
    scales[g] = kv_symmetric_scale(amax, qmax);
    const float s = fp16_to_float(scales[g]);
    const float inv = s > 0.0f ? 1.0f / s : 0.0f;
    for (std::int64_t i = begin; i < end; ++i) {
      store(i, code_round(code_clamp(x[i] * inv, -qmax, qmax)));
    }
  }
}

// Bounds keep every size product below 2^62: 2^20 heads x (2^20 x 2 + scales) bytes.
void check_heads_and_dim(std::int64_t n_kv_heads, std::int64_t head_dim) {
  constexpr std::int64_t kMaxDim = std::int64_t{1} << 20;
  if (n_kv_heads < 1 || n_kv_heads > kMaxDim) {
    throw_error<UsageError>("KV cache: n_kv_heads {} out of range [1, {}]", n_kv_heads, kMaxDim);
  }
  if (head_dim < 1 || head_dim > kMaxDim) {
    throw_error<UsageError>("KV cache: head_dim {} out of range [1, {}]", head_dim, kMaxDim);
  }
}

// Offset-int4 groups of a key: s and m are stored per group.
std::int64_t k4_groups(std::int64_t head_dim) {
  const std::int64_t group = kv_k4_group_size(head_dim);
  return (head_dim + group - 1) / group;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

double kv_sq_error_of(const float* x, const float* stored, std::int64_t n) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - static_cast<double>(stored[i]);
    sum += d * d;
  }
  return sum;
}

std::string_view kv_dtype_name(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::F16:
      return "f16";
    case KvDtype::Int8:
      return "int8";
    case KvDtype::Int4:
      return "int4";
  }
  return "unknown";
}

KvDtype parse_kv_dtype(std::string_view text) {
  const std::string t = lower(text);
  if (t == "f16" || t == "fp16") return KvDtype::F16;
  if (t == "int8" || t == "q8_0") return KvDtype::Int8;
  if (t == "int4" || t == "q4_0") return KvDtype::Int4;
  throw_error<UsageError>("unknown KV cache dtype '{}' (expected f16, int8 or int4)", text);
}

std::int64_t kv_group_size(std::int64_t head_dim) {
  return std::min(kMaxGroupSize, head_dim);
}

std::int64_t kv_group_size(KvSide side, KvDtype dtype, std::int64_t head_dim) {
  return side == KvSide::K && dtype == KvDtype::Int4 ? kv_k4_group_size(head_dim)
                                                     : kv_group_size(head_dim);
}

std::int64_t kv_scales_per_vector(KvDtype dtype, std::int64_t head_dim) {
  if (dtype == KvDtype::F16 || head_dim < 1) return 0;
  const std::int64_t group = kv_group_size(head_dim);
  return (head_dim + group - 1) / group;
}

std::int64_t kv_scales_per_vector(KvSide side, KvDtype dtype, std::int64_t head_dim) {
  if (side == KvSide::V || dtype != KvDtype::Int4) return kv_scales_per_vector(dtype, head_dim);
  if (head_dim < 1) return 0;
  return 2 * k4_groups(head_dim);
}

std::int64_t kv_data_bytes_per_vector(KvDtype dtype, std::int64_t head_dim) {
  switch (dtype) {
    case KvDtype::F16:
      return 2 * head_dim;
    case KvDtype::Int8:
      return (head_dim + 1) / 2 * 2;
    case KvDtype::Int4:
      return ((head_dim + 1) / 2 + 1) / 2 * 2;
  }
  return 0;
}

std::int64_t kv_bytes_per_vector(KvDtype dtype, std::int64_t head_dim) {
  return kv_data_bytes_per_vector(dtype, head_dim) + 2 * kv_scales_per_vector(dtype, head_dim);
}

std::int64_t kv_bytes_per_vector(KvSide side, KvDtype dtype, std::int64_t head_dim) {
  return kv_data_bytes_per_vector(dtype, head_dim) +
         2 * kv_scales_per_vector(side, dtype, head_dim);
}

std::int64_t kv_slot_bytes_per_layer(KvDtype k_dtype, KvDtype v_dtype, std::int64_t n_kv_heads,
                                     std::int64_t head_dim) {
  check_heads_and_dim(n_kv_heads, head_dim);
  return n_kv_heads * (kv_bytes_per_vector(KvSide::K, k_dtype, head_dim) +
                       kv_bytes_per_vector(KvSide::V, v_dtype, head_dim));
}

std::int64_t kv_block_offset_bytes_per_layer(KvDtype k_dtype, std::int64_t n_kv_heads,
                                             std::int64_t head_dim) {
  check_heads_and_dim(n_kv_heads, head_dim);
  return k_dtype == KvDtype::Int4 ? n_kv_heads * head_dim * 2 : 0;
}

std::int64_t kv_bytes_per_block_per_layer(KvDtype k_dtype, KvDtype v_dtype, std::int64_t n_kv_heads,
                                          std::int64_t head_dim, std::int64_t block_size) {
  // With the bounds of check_heads_and_dim a slot is below 2^43 bytes: 2^20 slots keep the
  // block below 2^63.
  constexpr std::int64_t kMaxBlockSize = std::int64_t{1} << 20;
  if (block_size < 1 || block_size > kMaxBlockSize) {
    throw_error<UsageError>("KV cache: block_size {} out of range [1, {}]", block_size,
                            kMaxBlockSize);
  }
  return block_size * kv_slot_bytes_per_layer(k_dtype, v_dtype, n_kv_heads, head_dim) +
         kv_block_offset_bytes_per_layer(k_dtype, n_kv_heads, head_dim);
}

double kv_bytes_per_token_per_layer(KvDtype k_dtype, KvDtype v_dtype, std::int64_t n_kv_heads,
                                    std::int64_t head_dim, std::int64_t block_size) {
  return static_cast<double>(
             kv_bytes_per_block_per_layer(k_dtype, v_dtype, n_kv_heads, head_dim, block_size)) /
         static_cast<double>(block_size);
}

void kv_quantize(KvDtype dtype, const float* x, std::int64_t head_dim, std::uint8_t* data,
                 std::uint16_t* scales) {
  const bool done = dtype == KvDtype::F16
                        ? kv_sse2::store_f16(x, head_dim, data)
                        : kv_sse2::quantize_symmetric(dtype, x, head_dim, data, scales);
  if (!done) kv_quantize_portable(dtype, x, head_dim, data, scales);
}

void kv_quantize_portable(KvDtype dtype, const float* x, std::int64_t head_dim, std::uint8_t* data,
                          std::uint16_t* scales) {
  switch (dtype) {
    case KvDtype::F16:
      for (std::int64_t i = 0; i < head_dim; ++i) store_f16(data, i, x[i]);
      return;
    case KvDtype::Int8:
      if (head_dim % 2) data[head_dim] = 0;  // padding byte
      quantize_groups(x, head_dim, kInt8Max, scales, [data](std::int64_t i, int q) {
        data[i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(q));
      });
      return;
    case KvDtype::Int4:
      std::memset(data, 0, static_cast<std::size_t>(kv_data_bytes_per_vector(dtype, head_dim)));
      quantize_groups(x, head_dim, kInt4Max, scales, [data](std::int64_t i, int q) {
        const auto nibble = static_cast<unsigned>(q + kInt4Offset);
        data[i >> 1] = static_cast<std::uint8_t>(data[i >> 1] | (nibble << ((i & 1) * 4)));
      });
      return;
  }
}

void kv_dequantize(KvDtype dtype, const std::uint8_t* data, const std::uint16_t* scales,
                   std::int64_t head_dim, float* out) {
  visit_dequantized(dtype, data, scales, head_dim, [out](std::int64_t i, float v) { out[i] = v; });
}

float kv_dot(KvDtype dtype, const float* q, const std::uint8_t* data, const std::uint16_t* scales,
             std::int64_t head_dim) {
  float sum = 0.0f;
  visit_dequantized(dtype, data, scales, head_dim,
                    [q, &sum](std::int64_t i, float k) { sum += q[i] * k; });
  return sum;
}

void kv_axpy(KvDtype dtype, float w, const std::uint8_t* data, const std::uint16_t* scales,
             std::int64_t head_dim, float* out) {
  visit_dequantized(dtype, data, scales, head_dim,
                    [w, out](std::int64_t i, float v) { out[i] += w * v; });
}

double kv_quant_sq_error(KvDtype dtype, const float* x, const std::uint8_t* data,
                         const std::uint16_t* scales, std::int64_t head_dim) {
  float stored[kv_sse2::kMaxHeadDim];
  if (head_dim <= kv_sse2::kMaxHeadDim &&
      kv_sse2::dequantize(dtype, data, scales, head_dim, stored)) {
    return kv_sq_error_of(x, stored, head_dim);
  }
  double sum = 0.0;
  visit_dequantized(dtype, data, scales, head_dim, [x, &sum](std::int64_t i, float v) {
    const double d = static_cast<double>(x[i]) - static_cast<double>(v);
    sum += d * d;
  });
  return sum;
}

}  // namespace kvscope
