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
// Int4 vectors, K and V, reach these functions in the Hadamard basis: the decoder turns
// them (kv_rotation.h), the formats do not know it.
//
// Int4 on the K side is a different format, "offset int4" (kv_k4_* below): keys carry large
// per-channel offsets (RoPE's low-frequency channels), which one symmetric scale per group
// spends most of its 16 levels on. So every block stores, per layer and KV head, an offset
// vector o = fp16(the block's first key) [head_dim], and each key stores its residual
// r = x - o asymmetrically per group of G = min(16, ceil(head_dim / 2)) values:
//   data    [ceil(head_dim / 2)] bytes padded to even, low nibble = even element, code 0..15
//   scales  [n_groups][2] fp16 (s, m): s = fp16(min((max r - min r) / 15, 65504)),
//           m = fp16(min r); code = round(clamp((r - m) / s, 0, 15)) with the fp16 s and m
//   value   x' = o + m + s * code
// A key's bytes depend only on itself and its block's first key, so writes stream (no
// requantization) and a prompt read in one chunk stores the same bytes as token by token.
// The first key is stored almost exactly (r = x - fp16(x) is tiny).
//
// Data of every vector is padded to an even number of bytes (Int8 with an odd head_dim,
// Int4 with head_dim % 4 in {1, 2, 3}), so every fp16 value in a block is 2-byte aligned.
// The padding and the offsets are part of kv_bytes_per_block_per_layer(), the one size
// function of the cache, so planner == allocator exactly.
#pragma once

#include <cstdint>
#include <string_view>

namespace kvscope {

enum class KvDtype : std::uint8_t { F16, Int8, Int4 };

// The half of the cache a vector belongs to. Formats are the same on both sides except
// Int4, which is offset int4 on the K side.
enum class KvSide : std::uint8_t { K, V };

// Token slots per block when nothing else is chosen (KvCacheConfig::block_size).
inline constexpr std::int64_t kDefaultKvBlockSize = 16;

// "f16", "int8", "int4".
std::string_view kv_dtype_name(KvDtype dtype);

// Accepts "f16" (also "fp16"), "int8" (also "q8_0"), "int4" (also "q4_0"), any case.
// Throws UsageError naming the text and the accepted names.
KvDtype parse_kv_dtype(std::string_view text);

// --- Sizes of one vector ------------------------------------------------------------------
// The two-argument forms describe the symmetric formats (every V vector, and F16 / Int8
// keys); the KvSide forms are what a block stores on that side.

// Values per quantization group: min(32, head_dim) for the symmetric formats; on the K
// side with Int4, kv_k4_group_size(head_dim).
std::int64_t kv_group_size(std::int64_t head_dim);
std::int64_t kv_group_size(KvSide side, KvDtype dtype, std::int64_t head_dim);

// fp16 scales stored per vector: 0 for F16, ceil(head_dim / G) for Int8 / Int4, and
// 2 * ceil(head_dim / G) (s and m per group) for Int4 keys.
std::int64_t kv_scales_per_vector(KvDtype dtype, std::int64_t head_dim);
std::int64_t kv_scales_per_vector(KvSide side, KvDtype dtype, std::int64_t head_dim);

// Bytes of `data` per vector, including the padding to an even count (the same on both
// sides).
std::int64_t kv_data_bytes_per_vector(KvDtype dtype, std::int64_t head_dim);

// data + scale bytes of one vector.
std::int64_t kv_bytes_per_vector(KvDtype dtype, std::int64_t head_dim);
std::int64_t kv_bytes_per_vector(KvSide side, KvDtype dtype, std::int64_t head_dim);

// --- Sizes of a block ---------------------------------------------------------------------
// One layer of a block of block_size token slots holds, for all KV heads:
//   per slot:  n_kv_heads x (K vector + V vector)          kv_slot_bytes_per_layer
//   once:      the offsets of Int4 K, n_kv_heads x head_dim fp16, else nothing
//                                                          kv_block_offset_bytes_per_layer
// Both validate n_kv_heads and head_dim (UsageError if < 1 or > 2^20).
std::int64_t kv_slot_bytes_per_layer(KvDtype k_dtype, KvDtype v_dtype, std::int64_t n_kv_heads,
                                     std::int64_t head_dim);
std::int64_t kv_block_offset_bytes_per_layer(KvDtype k_dtype, std::int64_t n_kv_heads,
                                             std::int64_t head_dim);

// THE size function of the KV cache: bytes one block takes per layer,
//   block_size x kv_slot_bytes_per_layer + kv_block_offset_bytes_per_layer.
// The memory planner and the block allocator (KvBlockLayout) both use it. Examples:
//   F16, 32 KV heads, head_dim 128, blocks of 16: 16 x 2 x 32 x 128 x 2 = 262144
//   Int4 K + Int4 V, 4 KV heads, head_dim 8, blocks of 16 (stories260K):
//     16 x 4 x ((4 + 2 x 2 x 2) + (4 + 2)) + 4 x 8 x 2 = 1216 (19 B per token and KV head)
// Throws UsageError if n_kv_heads, head_dim or block_size is < 1 or too large (the result
// stays below 2^62).
std::int64_t kv_bytes_per_block_per_layer(KvDtype k_dtype, KvDtype v_dtype, std::int64_t n_kv_heads,
                                          std::int64_t head_dim, std::int64_t block_size);

// Bytes per token per layer for display: kv_bytes_per_block_per_layer / block_size, which is
// fractional when the offsets do not divide evenly. Never size memory with it.
double kv_bytes_per_token_per_layer(KvDtype k_dtype, KvDtype v_dtype, std::int64_t n_kv_heads,
                                    std::int64_t head_dim, std::int64_t block_size);
inline double kv_bytes_per_token_per_layer(KvDtype dtype, std::int64_t n_kv_heads,
                                           std::int64_t head_dim,
                                           std::int64_t block_size = kDefaultKvBlockSize) {
  return kv_bytes_per_token_per_layer(dtype, dtype, n_kv_heads, head_dim, block_size);
}

// --- The symmetric formats (F16, Int8, Int4 on the V side) --------------------------------

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
// measurement of quantization error (see KvCacheObserver::record_quant_error).
double kv_quant_sq_error(KvDtype dtype, const float* x, const std::uint8_t* data,
                         const std::uint16_t* scales, std::int64_t head_dim);

// --- Offset int4, the Int4 K format (see the top of this file) ----------------------------
// offsets: the block's [head_dim] fp16 offsets of this key's KV head and layer
// (KvBlockLayout::k_offsets), written from the block's first key before any key of the
// block is quantized: positions are written in order, so slot 0 always comes first.

// min(16, ceil(head_dim / 2)): at least two groups per key. Smaller groups cost bytes (a
// scale and a minimum each) and buy accuracy: at a small head_dim one group per key loses
// far more than two, and on SmolLM2-135M groups of 16 instead of 32 cut the int4 cache's KL
// from f16 by about a quarter for 8 more bytes per key (the README's KV cache table).
std::int64_t kv_k4_group_size(std::int64_t head_dim);

// offsets[head_dim] = fp16(x): what slot 0's key sets for its block.
void kv_k4_set_offsets(const float* x, std::int64_t head_dim, std::uint16_t* offsets);

// Quantizes the key x[head_dim] against offsets into data[kv_data_bytes_per_vector(Int4)]
// and scales[kv_scales_per_vector(KvSide::K, Int4)]. NaN values do not widen a group's
// range and store code 0; a group without a non-NaN value stores s = m = 0.
void kv_k4_quantize(const float* x, const std::uint16_t* offsets, std::int64_t head_dim,
                    std::uint8_t* data, std::uint16_t* scales);

// out[head_dim] = o + m + s * code, the values kv_k4_quantize stored.
void kv_k4_dequantize(const std::uint8_t* data, const std::uint16_t* scales,
                      const std::uint16_t* offsets, std::int64_t head_dim, float* out);
// The same values with the block's offsets already decoded to floats (once per block, for
// every key of it): what the CPU attention reads keys with.
void kv_k4_dequantize(const std::uint8_t* data, const std::uint16_t* scales, const float* offsets,
                      std::int64_t head_dim, float* out);

// out[head_dim] = s * code: a key without its offsets and group minimums, exact in float (an
// fp16 scale times a 4-bit code). The CPU attention scores keys from these values and adds
// the rest once per block and per key (float_attention.h, KeyTerms): the same sum as
// kv_k4_dot's, 8 lanes at a time.
void kv_k4_scaled_codes(const std::uint8_t* data, const std::uint16_t* scales,
                        std::int64_t head_dim, float* out);

// The score of a query against offset-int4 keys, without dequantizing them:
//   q . x' = q . o + sum_g (m_g * sum_{i in g} q_i + s_g * sum_{i in g} q_i * code_i)
// The first two terms depend only on the query and the block, so they are computed once
// per block and KV head: q_terms [1 + n_groups] = {q . o, sum of q over group 0, 1, ...}.
std::int64_t kv_k4_query_terms_size(std::int64_t head_dim);  // 1 + n_groups
void kv_k4_query_terms(const float* q, const std::uint16_t* offsets, std::int64_t head_dim,
                       float* q_terms);
float kv_k4_dot(const float* q, const float* q_terms, const std::uint8_t* data,
                const std::uint16_t* scales, std::int64_t head_dim);

// sum_i (x[i] - x'[i])^2 for a key kv_k4_quantize stored from x.
double kv_k4_sq_error(const float* x, const std::uint8_t* data, const std::uint16_t* scales,
                      const std::uint16_t* offsets, std::int64_t head_dim);

}  // namespace kvscope
