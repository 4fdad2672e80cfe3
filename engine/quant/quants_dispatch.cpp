// The one switch that turns a TensorType into its CPU codec (quants_float.cpp,
// quants_legacy.cpp, quants_k.cpp), and the public row operations of tensor_type.h.
#include <cstdint>

#include "quant/quant_blocks.h"
#include "quant/tensor_type.h"
#include "util/error.h"

namespace kvscope {

namespace {

struct Codec {
  void (*dequantize)(const void* src, float* dst, std::int64_t n);
  void (*quantize)(const float* x, void* dst, std::int64_t n);
  float (*dot)(const void* row, const float* x, std::int64_t n);
  std::int64_t block_elems;  // a power of two
};

#define KVSCOPE_CODEC(name, block_elems)                                                   \
  Codec {                                                                                  \
    &quants::dequantize_##name, &quants::quantize_##name, &quants::dot_##name, block_elems \
  }

[[noreturn]] void throw_unsupported(TensorType type) {
  const auto raw = static_cast<std::uint32_t>(type);
  const auto info = tensor_type_info(raw);
  if (!info) throw_error<ModelError>("unknown tensor type {}", raw);
  throw_error<ModelError>(
      "tensor type {} (type {}) is not supported by the CPU backend (supported: f32, f16, bf16, "
      "q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, q6_K)",
      info->name, raw);
}

Codec codec_for(TensorType type) {
  switch (type) {
    case TensorType::F32:
      return KVSCOPE_CODEC(f32, 1);
    case TensorType::F16:
      return KVSCOPE_CODEC(f16, 1);
    case TensorType::BF16:
      return KVSCOPE_CODEC(bf16, 1);
    case TensorType::Q4_0:
      return KVSCOPE_CODEC(q4_0, quants::kQK);
    case TensorType::Q4_1:
      return KVSCOPE_CODEC(q4_1, quants::kQK);
    case TensorType::Q5_0:
      return KVSCOPE_CODEC(q5_0, quants::kQK);
    case TensorType::Q5_1:
      return KVSCOPE_CODEC(q5_1, quants::kQK);
    case TensorType::Q8_0:
      return KVSCOPE_CODEC(q8_0, quants::kQK);
    case TensorType::Q4_K:
      return KVSCOPE_CODEC(q4_K, quants::kQK_K);
    case TensorType::Q5_K:
      return KVSCOPE_CODEC(q5_K, quants::kQK_K);
    case TensorType::Q6_K:
      return KVSCOPE_CODEC(q6_K, quants::kQK_K);
    case TensorType::Q8_1:
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q8_K:
      break;
  }
  throw_unsupported(type);
}

#undef KVSCOPE_CODEC

// n must be a whole number of blocks; the GGUF reader rejects other shapes, so this only
// catches a caller passing a wrong length.
Codec checked_codec(TensorType type, std::int64_t n, const char* operation) {
  const Codec codec = codec_for(type);
  if (n < 0 || (n & (codec.block_elems - 1)) != 0) {
    throw_error<UsageError>("{}: row of {} values is not a whole number of {}-value {} blocks",
                            operation, n, codec.block_elems, tensor_type_name(type));
  }
  return codec;
}

}  // namespace

void dequantize_row(TensorType type, const void* src, float* dst, std::int64_t n) {
  checked_codec(type, n, "dequantize_row").dequantize(src, dst, n);
}

void quantize_row(TensorType type, const float* x, void* dst, std::int64_t n) {
  checked_codec(type, n, "quantize_row").quantize(x, dst, n);
}

float dot_row(TensorType type, const void* row, const float* x, std::int64_t n) {
  return checked_codec(type, n, "dot_row").dot(row, x, n);
}

RowDotFn row_dot_fn(TensorType type, std::int64_t n) {
  return checked_codec(type, n, "row_dot_fn").dot;
}

}  // namespace kvscope
