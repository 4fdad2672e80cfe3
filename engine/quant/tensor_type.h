// Tensor element types as GGUF numbers them (ggml's type ids), with their block geometry,
// and the CPU reference operations on rows of them: dequantize, quantize and the dot
// product of a stored row with float activations. The CPU backend multiplies straight
// from the stored (possibly quantized) rows; no dequantized copy of a model is made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kvscope {

enum class TensorType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  BF16 = 30,
};

// Geometry of one type: `block_elems` values are stored in `block_bytes` bytes.
struct TensorTypeInfo {
  TensorType type;
  std::string_view name;  // as llama.cpp prints it: "f32", "q4_K", ...
  std::int64_t block_elems;
  std::int64_t block_bytes;
  bool supported;  // we can dequantize and dot it (Q8_1, Q2_K, Q3_K, Q8_K are recognised only)
};

// nullopt for a number GGUF does not define (callers turn that into a ModelError).
std::optional<TensorTypeInfo> tensor_type_info(std::uint32_t raw_type);
const TensorTypeInfo& tensor_type_info(TensorType type);
std::string_view tensor_type_name(TensorType type);
// Parses "f16", "Q4_K", "q8_0", "bf16" (case-insensitive); nullopt when unknown.
std::optional<TensorType> tensor_type_from_name(std::string_view name);

// Bytes of a row of `n` values; n must be a multiple of block_elems (checked by callers).
std::int64_t row_bytes(TensorType type, std::int64_t n);
// Average bits per weight, e.g. 4.5 for Q4_0, 16 for F16.
double bits_per_weight(TensorType type);

// dst[0..n) = dequantized src row. n must be a multiple of the block size.
void dequantize_row(TensorType type, const void* src, float* dst, std::int64_t n);
// dst = quantized x[0..n), using the same rounding as llama.cpp's reference quantizers.
void quantize_row(TensorType type, const float* x, void* dst, std::int64_t n);
// sum_i row[i] * x[i] for a stored row of n values, without materialising the row.
float dot_row(TensorType type, const void* row, const float* x, std::int64_t n);
// The function dot_row dispatches to, resolved (and n checked) once: hot loops over many
// rows of one tensor call it directly, without a per-row type switch.
using RowDotFn = float (*)(const void* row, const float* x, std::int64_t n);
RowDotFn row_dot_fn(TensorType type, std::int64_t n);

}  // namespace kvscope
