#include "device_weights.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "util/error.h"
#include "util/half.h"

namespace kvscope::cuda {

namespace {

// The device type of a matrix the kernels read as stored (F16 and the quantized types of
// quant_dequant.h); nullopt for F32 / BF16 (converted) and types with no kernel.
std::optional<DeviceWeightType> device_type_of(TensorType t) {
  switch (t) {
    case TensorType::F16:
      return DeviceWeightType::F16;
    case TensorType::Q8_0:
      return DeviceWeightType::Q8_0;
    case TensorType::Q4_0:
      return DeviceWeightType::Q4_0;
    case TensorType::Q4_1:
      return DeviceWeightType::Q4_1;
    case TensorType::Q5_0:
      return DeviceWeightType::Q5_0;
    case TensorType::Q5_1:
      return DeviceWeightType::Q5_1;
    case TensorType::Q4_K:
      return DeviceWeightType::Q4_K;
    case TensorType::Q5_K:
      return DeviceWeightType::Q5_K;
    case TensorType::Q6_K:
      return DeviceWeightType::Q6_K;
    default:
      return std::nullopt;
  }
}

// F32 and BF16 go through the CPU dequantizer (to f32 or fp16); the rest stay as stored.
bool matrix_type_supported(TensorType t) {
  return t == TensorType::F32 || t == TensorType::BF16 || device_type_of(t).has_value();
}

// Norm weights and biases (1 x n or n x 1) go through the CPU dequantizer to f32.
bool is_vector_weight(const WeightView& w) {
  return w.rows == 1 || w.cols == 1;
}

// An F32 / BF16 matrix row by row through the CPU's own dequantizer, as f32 or fp16 bytes.
// Whether every value of the matrix survives fp16 (|v| <= 65504; NaN stays NaN): a BF16 or
// F32 matrix that does not keeps f32 on the device rather than turning values into inf.
bool fits_fp16(const WeightView& w) {
  std::vector<float> row(static_cast<std::size_t>(w.cols));
  for (std::int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, w.row(r), row.data(), w.cols);
    for (const float v : row) {
      if (std::fabs(v) > 65504.0f) return false;
    }
  }
  return true;
}

std::vector<std::uint8_t> converted_rows(const WeightView& w, DeviceWeightType type) {
  const std::size_t elem = type == DeviceWeightType::F32 ? 4 : 2;
  std::vector<std::uint8_t> host(static_cast<std::size_t>(w.rows * w.cols) * elem);
  std::vector<float> row(static_cast<std::size_t>(w.cols));
  for (std::int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, w.row(r), row.data(), w.cols);
    std::uint8_t* dst = host.data() + static_cast<std::size_t>(r * w.cols) * elem;
    if (elem == 4) {
      std::memcpy(dst, row.data(), row.size() * 4);
    } else {
      for (std::size_t c = 0; c < row.size(); ++c) {
        const std::uint16_t h = float_to_fp16(row[c]);
        std::memcpy(dst + 2 * c, &h, 2);
      }
    }
  }
  return host;
}

}  // namespace

std::optional<std::string> unsupported_weights(const Model& model) {
  std::optional<std::string> why;
  model.for_each_weight([&](const WeightView& w) {
    if (why || matrix_type_supported(w.type)) return;
    if (is_vector_weight(w)) return;
    why = fmt::format(
        "tensor {} is {}; the CUDA backend supports f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, "
        "q5_1, q4_K, q5_K and q6_K",
        w.name, tensor_type_name(w.type));
  });
  return why;
}

DeviceModelWeights::DeviceModelWeights(const Model& model, DeviceAllocator& alloc,
                                       bool f32_as_f16) {
  if (auto why = unsupported_weights(model)) throw_error<ModelError>("{}", *why);
  const ModelWeights& w = model.weights();
  token_embd = matrix(w.token_embd, alloc, f32_as_f16);
  for (const LayerWeights& l : w.layers) {
    DeviceLayerWeights d;
    d.attn_norm = vector(l.attn_norm, alloc);
    d.wq = matrix(l.wq, alloc, f32_as_f16);
    d.wk = matrix(l.wk, alloc, f32_as_f16);
    d.wv = matrix(l.wv, alloc, f32_as_f16);
    d.wo = matrix(l.wo, alloc, f32_as_f16);
    if (l.bq) d.bq = vector(l.bq, alloc);
    if (l.bk) d.bk = vector(l.bk, alloc);
    if (l.bv) d.bv = vector(l.bv, alloc);
    d.ffn_norm = vector(l.ffn_norm, alloc);
    d.w_gate = matrix(l.w_gate, alloc, f32_as_f16);
    d.w_up = matrix(l.w_up, alloc, f32_as_f16);
    d.w_down = matrix(l.w_down, alloc, f32_as_f16);
    layers.push_back(d);
  }
  output_norm = vector(w.output_norm, alloc);
  // tied embeddings: one copy serves both
  output = w.output.data == w.token_embd.data ? token_embd : matrix(w.output, alloc, f32_as_f16);
}

DeviceWeight DeviceModelWeights::matrix(const WeightView& w, DeviceAllocator& alloc,
                                        bool f32_as_f16) {
  DeviceWeight d;
  d.rows = w.rows;
  d.cols = w.cols;
  std::vector<std::uint8_t> host;  // converted copy when the device encoding differs
  const void* src = w.data;
  if (const auto stored = device_type_of(w.type)) {
    d.type = *stored;  // uploaded byte for byte: the kernels read the GGUF blocks in place
    const std::int64_t block = device_block_values(d.type);
    if (w.cols % block != 0) {
      throw_error<ModelError>("tensor {}: {} has {} columns, not a multiple of its {}-value block",
                              w.name, tensor_type_name(w.type), w.cols, block);
    }
  } else if (w.type == TensorType::F32 || w.type == TensorType::BF16) {
    const bool keep_f32 = (w.type == TensorType::F32 && !f32_as_f16) || !fits_fp16(w);
    d.type = keep_f32 ? DeviceWeightType::F32 : DeviceWeightType::F16;
    host = converted_rows(w, d.type);
    src = host.data();
  } else {
    throw_error<ModelError>("tensor {}: type {} has no CUDA kernel", w.name,
                            tensor_type_name(w.type));
  }
  d.row_bytes = device_row_bytes(d.type, d.cols);
  const auto bytes = static_cast<std::size_t>(d.row_bytes * d.rows);
  buffers_.emplace_back(alloc, bytes, DeviceMemoryCategory::Weights, w.name.c_str());
  buffers_.back().upload(src, bytes);
  d.data = buffers_.back().get();
  return d;
}

const float* DeviceModelWeights::vector(const WeightView& w, DeviceAllocator& alloc) {
  const std::int64_t n = w.rows * w.cols;
  std::vector<float> host(static_cast<std::size_t>(n));
  dequantize_row(w.type, w.data, host.data(), n);
  buffers_.emplace_back(alloc, host.size() * sizeof(float), DeviceMemoryCategory::Weights,
                        w.name.c_str());
  buffers_.back().upload(host.data(), host.size() * sizeof(float));
  return buffers_.back().as<const float>();
}

}  // namespace kvscope::cuda
