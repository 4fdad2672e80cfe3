// The CUDA kernels of the decoder, one family per .cu file, as host-callable launchers.
// Every launcher takes the stream it runs on, checks the launch (KVSCOPE_CUDA_CHECK_LAUNCH)
// and does not synchronise. Pointers are device pointers; shapes are given as in the CPU
// reference (engine/cpu/cpu_ops.h, attention/paged_attention.h, rope.h, kv/kv_format.h), which each
// kernel is tested against in tests/kernels/.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kv/format/kv_block_layout.h"

namespace kvscope::cuda {

// --- Weights on the device -------------------------------------------------------------

// How a weight matrix is stored on the device. F32 and F16 are plain row-major; the
// quantized types are ggml's blocks, byte for byte as in the GGUF file (quant_blocks.h):
// 32 values per block for Q8_0 .. Q5_1, 256 per super-block for Q4_K, Q5_K and Q6_K. The
// matvec kernels dequantize them on the fly (quant_dequant.h); prompt GEMMs go through an
// fp16 scratch (launch_dequantize_f16).
enum class DeviceWeightType : std::uint8_t {
  F32,
  F16,
  Q8_0,
  Q4_0,
  Q4_1,
  Q5_0,
  Q5_1,
  Q4_K,
  Q5_K,
  Q6_K
};

struct DeviceWeight {
  DeviceWeightType type = DeviceWeightType::F32;
  std::int64_t rows = 0;  // outputs
  std::int64_t cols = 0;  // inputs (a multiple of device_block_values(type))
  std::int64_t row_bytes = 0;
  const void* data = nullptr;
};

// Bytes of one row of `cols` values of `type`.
std::int64_t device_row_bytes(DeviceWeightType type, std::int64_t cols);
// Values per stored block: 1 (F32, F16), 32 (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1), 256 (K-quants).
std::int64_t device_block_values(DeviceWeightType type);
// The type's name as tensor_type_name spells it: "f32", "q4_K", ...
// Quantized blocks (Q8_0 .. Q6_K), not plain F32 / F16 values.
inline bool is_quantized(DeviceWeightType type) {
  return type != DeviceWeightType::F32 && type != DeviceWeightType::F16;
}
const char* device_weight_type_name(DeviceWeightType type);
// The alignment w.data needs for the kernels' loads: the codec's kAlign for the quantized
// types (16 for Q4_K / Q5_K, 4 for Q4_1 / Q5_1, 2 for Q4_0, Q5_0, Q8_0, Q6_K; quant_dequant.h),
// the element size for F32 / F16 (whose 16-byte vector loads are taken only where the row is
// aligned for them). Every row start inherits it: row_bytes is a multiple.
std::int64_t device_weight_alignment(DeviceWeightType type);
// UsageError naming `launcher` unless w.cols > 0 is a whole number of blocks, w.row_bytes is
// device_row_bytes(w.type, w.cols) and w.data is aligned to device_weight_alignment(w.type)
// (cudaMalloc gives 256; a part of a stacked matrix starts at a row start of the stack).
void check_device_weight(const DeviceWeight& w, const char* launcher);

// --- The paged KV pool -----------------------------------------------------------------

// One layer's sections inside a block (KvBlockLayout flattened to offsets the kernels use):
// vector (head, slot) of side K starts at base + k_data + (head * block_size + slot) *
// k_stride and its fp16 scales at base + k_scales + (head * block_size + slot) * 2 * k_n_scales.
// Int4 keys are offset int4 (kv_format.h): their head's fp16 offsets [head_dim] are at
// base + k_offsets + head * head_dim * 2, and each group holds (s, m).
struct KvLayerLayout {
  KvDtype k_dtype = KvDtype::F16;
  KvDtype v_dtype = KvDtype::F16;
  int head_dim = 0;
  int block_size = 0;
  int n_kv_heads = 0;
  std::int64_t block_bytes = 0;
  std::int64_t k_data = 0, k_scales = 0, v_data = 0, v_scales = 0;  // byte offsets
  std::int64_t k_offsets = 0;                                       // byte offset (Int4 K)
  std::int64_t k_stride = 0, v_stride = 0;                          // data bytes per vector
  int k_n_scales = 0, v_n_scales = 0;                               // fp16 scales per vector
  int k_group = 0, v_group = 0;  // values per quantization group: kv_group_size(side, ...)
};

KvLayerLayout kv_layer_layout(const KvBlockLayout& layout, std::int64_t layer_in_group);

// A layer group's exact tail (kv/exact_tail.h) on the device: fp16 copies of the newest
// blocks. A token at pos reads its table's entry b from copy shadows[b] (laid out by
// `layout`, F16 K and V) when that is >= 0 and b > pos / block_size - tail_blocks; kv_append
// writes a token into its block's copy too. shadows == nullptr: the group keeps none.
struct KvTailTables {
  const int* shadows = nullptr;  // parallel to KvStepTables::blocks: shadow index or -1
  std::uint8_t* pool = nullptr;  // [n_shadows][layout.block_bytes]
  KvLayerLayout layout;
  int tail_blocks = 0;
};

// Where each token of a step reads and writes its layer group's KV.
struct KvStepTables {
  const int* pos = nullptr;          // [n_tokens] position of each token
  const int* first = nullptr;        // [n_tokens] oldest visible key (sliding window; else 0)
  const int* table_start = nullptr;  // [n_tokens] offset of the token's sequence in `blocks`
  const int* blocks = nullptr;       // the sequences' block tables, concatenated
  std::uint8_t* pool = nullptr;      // [n_blocks][block_bytes]
  KvTailTables tail;
};

// --- Launchers -------------------------------------------------------------------------

// x[t][:] = dequantized row tokens[t] of `table`. x: [n_tokens][table.cols].
void launch_embedding(const DeviceWeight& table, const int* tokens, int n_tokens, float* x,
                      cudaStream_t stream);

// Where a kernel that writes a projection's input also writes its 8-bit codes
// (quant_activations.h): q [n_values], d [n_values / 32], in the order of the output.
// q == nullptr: no codes.
struct Q8Codes {
  std::int8_t* q = nullptr;
  float* d = nullptr;
};

// out[r] = x[rows ? rows[r] : r] / sqrt(mean(x^2) + eps) * weight, for r < n_rows.
// x: [*][n]; weight: [n] f32; out: [n_rows][n]. out may alias x when rows is null. With
// codes, also out's 8-bit codes, as launch_quantize_q8 of out gives them (n % 32 == 0).
void launch_rmsnorm(const float* x, const int* rows, const float* weight, int n_rows, int n,
                    float eps, float* out, cudaStream_t stream, Q8Codes codes = {});

// Rotates q [n_tokens][n_heads][head_dim] and k [n_tokens][n_kv_heads][head_dim] in place by
// the angles of each token's position: cos/sin tables [max_pos][rope_dim / 2] as
// Rope::angles gives them. adjacent: pairs (2i, 2i+1), else (i, i + rope_dim / 2).
struct RopeArgs {
  int n_tokens = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0, rope_dim = 0;
  bool adjacent = true;
  const int* pos = nullptr;
  const float* cos = nullptr;
  const float* sin = nullptr;
};
void launch_rope(const RopeArgs& args, float* q, float* k, cudaStream_t stream);

// Each row of x [n_rows][head_dim] times the orthonormal Hadamard matrix, in place: the
// bits kv_rotate_rows (kv/format/kv_rotation.h) gives, for the int4 sides of the cache.
void launch_hadamard_rows(float* x, std::int64_t n_rows, int head_dim, cudaStream_t stream);

// out[i] = silu(gate[i]) * up[i]; out may alias gate or up. With codes, also out's 8-bit
// codes, as launch_quantize_q8 of out gives them (n % 32 == 0).
void launch_swiglu(const float* gate, const float* up, float* out, std::int64_t n,
                   cudaStream_t stream, Q8Codes codes = {});
// out[i] = gelu_tanh(gate[i]) * up[i] (Gemma's GeGLU, as the CPU's geglu_row); out may
// alias gate or up. Codes as launch_swiglu.
void launch_geglu(const float* gate, const float* up, float* out, std::int64_t n,
                  cudaStream_t stream, Q8Codes codes = {});
// x[i] *= s (Gemma's embeddings times sqrt(dim)).
void launch_scale(float* x, float s, std::int64_t n, cudaStream_t stream);
// x[i] = cap * tanh(x[i] / cap) (Gemma 2's final logits, as the CPU's soft_cap); cap > 0.
void launch_soft_cap(float* x, float cap, std::int64_t n, cudaStream_t stream);
// x[i] += y[i] (the residual connection).
void launch_add_in_place(float* x, const float* y, std::int64_t n, cudaStream_t stream);
// y[t][i] += bias[i]; y: [n_rows][n].
void launch_add_bias(float* y, const float* bias, int n_rows, int n, cudaStream_t stream);

// y[t][r] = sum_c W[r][c] * x[t][c], or y[t][r] += that with accumulate (the residual
// connection, without an add kernel). x: [n_tokens][W.cols]; y: [n_tokens][W.rows], not
// overlapping x. x must be 16-byte aligned for the quantized types (UsageError otherwise).
void launch_matvec(const DeviceWeight& w, const float* x, int n_tokens, float* y,
                   cudaStream_t stream, bool accumulate = false);

// 8-bit activations (quant_activations.h): x [n_values] (a multiple of 32) to codes
// q [n_values] and their scales d [n_values / 32], one per block of 32.
void launch_quantize_q8(const float* x, std::int64_t n_values, std::int8_t* q, float* d,
                        cudaStream_t stream);

// launch_matvec for a quantized W with x given as 8-bit codes (launch_quantize_q8 of
// [n_tokens][W.cols]): integer dot products, within the codes' rounding of launch_matvec.
// q and d 16-byte aligned; UsageError for F32 / F16 weights.
void launch_matvec_q8(const DeviceWeight& w, const std::int8_t* q, const float* d, int n_tokens,
                      float* y, cudaStream_t stream, bool accumulate = false);

// out[r - row0][c] = fp16(dequantized W[r][c]) for r in [row0, row0 + n_rows): the scratch a
// cuBLAS GEMM reads for prompt chunks. out: [n_rows][w.cols] fp16 bits.
void launch_dequantize_f16(const DeviceWeight& w, std::int64_t row0, std::int64_t n_rows,
                           std::uint16_t* out, cudaStream_t stream);

// A layer's KV quantization-error sums: QuantErrorSums of K and of V without the count
// (n_tokens * n_kv_heads * head_dim per side, known on the host).
struct KvErrorSums {
  double k_sq_error = 0.0, k_sq_exact = 0.0;
  double v_sq_error = 0.0, v_sq_exact = 0.0;
};

// Quantizes each token's K and V ([n_tokens][n_kv_heads][head_dim]) into its slot of the
// paged pool, producing exactly the bytes the CPU writes (kv_slot_writer.h: data, padding,
// scales, and for Int4 K the offsets a block's slot-0 token sets), and into its block's
// exact-tail copy in fp16 when the block has one (tables.tail). The tokens of one call
// may include a block's slot 0 and later slots of the same block. With `errors` (device
// memory), each vector is then read back through the element functions attention uses and
// sum (x - stored)^2 and sum x^2 are added to *errors with atomic adds, as
// kv_slot_quant_error measures on the CPU (the live panel's error figures; the last digits of
// the sums vary with the order of the adds).
void launch_kv_append(const KvLayerLayout& layout, const KvStepTables& tables, const float* k,
                      const float* v, int n_tokens, cudaStream_t stream,
                      KvErrorSums* errors = nullptr);

// Paged GQA attention for every token of a step (decode, or causal prompt chunks: each
// token sees keys [first[t], pos[t]] of its own sequence, which must already be written).
// q, out: [n_tokens][n_heads][head_dim] (q rotated, not scaled). One CTA serves all query
// heads of one KV head, so each K/V byte is read once per token; the keys are split into
// n_splits ranges whose partial results are merged with a log-sum-exp, which fills the GPU
// for a single long sequence. partial: attention_partial_floats(...) floats (unused when
// n_splits is 1).
struct AttentionArgs {
  int n_tokens = 0, n_heads = 0;
  int n_splits = 1;
  float scale = 1.0f;  // 1 / sqrt(head_dim)
  // > 0: scores = softcap * tanh(q.k * scale / softcap) (Gemma 2; q is pre-scaled by
  // scale / softcap, as llama.cpp divides it); 0: scores = q.k * scale.
  float softcap = 0.0f;
  KvLayerLayout layout;
  KvStepTables tables;
};
std::int64_t attention_partial_floats(int n_tokens, int n_heads, int head_dim, int n_splits);
// Splits that fill the GPU in one wave (about three CTAs per SM, rounded down), at least
// kMinKeysPerSplit (64) keys each, at most kMaxSplits (128).
int attention_splits(int n_tokens, int n_heads, int n_kv_heads, std::int64_t max_keys,
                     int sm_count);
void launch_paged_attention(const AttentionArgs& args, const float* q, float* partial, float* out,
                            cudaStream_t stream);

// out[r] = the index of the largest of x[r][0..n) (the lowest index among equals), or
// kArgmaxInvalid when the row holds a NaN or +inf, kArgmaxAllMasked when every value is -inf:
// greedy_pick's answers (run/greedy.h). x: [n_rows][n]; out: [n_rows].
inline constexpr int kArgmaxInvalid = -1;
inline constexpr int kArgmaxAllMasked = -2;
void launch_argmax(const float* x, int n_rows, int n, int* out, cudaStream_t stream);

}  // namespace kvscope::cuda
