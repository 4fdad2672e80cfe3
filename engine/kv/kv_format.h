// KV cache element formats: how one K or V vector (one token, one KV head, head_dim values)
// is stored, and the CPU reference quantize / dequantize for it.
//
// Every format stores a vector as `data` bytes plus `scales` fp16 values:
//
//   F16   data   [head_dim] fp16 (2 bytes each)                     scales: none
//   Int8  data   [head_dim] int8, q = round(x / s)                   scales: [n_groups] fp16
//   Int4  data   [ceil(head_dim / 2)] bytes, two int4 per byte,      scales: [n_groups] fp16
//                low nibble = even element, stored as q + 8 (0..15)
//
// Quantized formats split the vector into groups of G = min(32, head_dim) values (the
// last group is shorter when G does not divide head_dim, e.g. head_dim 40 -> 32 + 8) with
// one symmetric scale per group, as llama.cpp's q8_0 / q4_0 do:
//   Int8: s = max|x| / 127, q in [-127, 127]
//   Int4: s = max|x| / 7,   q in [-7, 7]  (the code -8 is never produced; using it as
//         llama.cpp's q4_0 does buys one level but doubles the worst-case error of the
//         value opposite the extreme, so we keep the symmetric grid)
// q is computed with the scale already rounded to fp16, so |x - s*q| <= s/2 for every
// finite x whose group scale is representable (max|x| below ~8.3e6 for Int8).
//
// Data of every vector is padded to an even number of bytes (Int8 with an odd head_dim,
// Int4 with head_dim % 4 in {1, 2, 3}), so every fp16 value in a block is 2-byte aligned.
// The padding is part of kv_bytes_per_token_per_layer(), so planner == allocator exactly.
#pragma once

#include <cstdint>
#include <string_view>

namespace kvscope {

enum class KvDtype : std::uint8_t { F16, Int8, Int4 };

// "f16", "int8", "int4".
std::string_view kv_dtype_name(KvDtype dtype);

// Accepts "f16" (also "fp16"), "int8" (also "q8_0"), "int4" (also "q4_0"), any case.
// Throws UsageError naming the text and the accepted names.
KvDtype parse_kv_dtype(std::string_view text);

// Values per quantization group: min(32, head_dim).
std::int64_t kv_group_size(std::int64_t head_dim);

// fp16 scales stored per vector: 0 for F16, ceil(head_dim / G) otherwise.
std::int64_t kv_scales_per_vector(KvDtype dtype, std::int64_t head_dim);

// Bytes of `data` per vector, including the padding to an even count.
std::int64_t kv_data_bytes_per_vector(KvDtype dtype, std::int64_t head_dim);

// data + scale bytes of one vector.
std::int64_t kv_bytes_per_vector(KvDtype dtype, std::int64_t head_dim);

// THE size function of the KV cache: bytes of K plus V (data and scales) that one token
// takes in one layer, for all KV heads. The memory planner and the block allocator both
// use it. Example: F16, 32 KV heads, head_dim 128 -> 2 * 32 * 128 * 2 = 16384.
// Throws UsageError if n_kv_heads or head_dim is < 1 or the result overflows.
std::int64_t kv_bytes_per_token_per_layer(KvDtype k_dtype, KvDtype v_dtype, std::int64_t n_kv_heads,
                                          std::int64_t head_dim);
inline std::int64_t kv_bytes_per_token_per_layer(KvDtype dtype, std::int64_t n_kv_heads,
                                                 std::int64_t head_dim) {
  return kv_bytes_per_token_per_layer(dtype, dtype, n_kv_heads, head_dim);
}

// Quantizes x[head_dim] into data[kv_data_bytes_per_vector] and
// scales[kv_scales_per_vector] (scales is unused for F16 and may be null).
void kv_quantize(KvDtype dtype, const float* x, std::int64_t head_dim, std::uint8_t* data,
                 std::uint16_t* scales);

// The inverse: out[head_dim] = the values kv_quantize stored.
void kv_dequantize(KvDtype dtype, const std::uint8_t* data, const std::uint16_t* scales,
                   std::int64_t head_dim, float* out);

// Attention inner loops, without a temporary buffer:
//   kv_dot:  returns sum_i q[i] * dequant(k)[i]     (the score of one key)
//   kv_axpy: out[i] += w * dequant(v)[i]            (accumulating one weighted value)
float kv_dot(KvDtype dtype, const float* q, const std::uint8_t* data, const std::uint16_t* scales,
             std::int64_t head_dim);
void kv_axpy(KvDtype dtype, float w, const std::uint8_t* data, const std::uint16_t* scales,
             std::int64_t head_dim, float* out);

// sum_i (x[i] - dequant[i])^2 for a vector kv_quantize stored from x: the decoder's
// measurement of quantization error (see KvCacheManager::record_quant_error).
double kv_quant_sq_error(KvDtype dtype, const float* x, const std::uint8_t* data,
                         const std::uint16_t* scales, std::int64_t head_dim);

}  // namespace kvscope
