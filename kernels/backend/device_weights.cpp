#include "backend/device_weights.h"

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

// An F32 / BF16 matrix row by row through the CPU's own dequantizer, as f32 or fp16 bytes;
// nullopt for fp16 as soon as a value is beyond its range (|v| > 65504; NaN stays NaN): such a
// matrix keeps f32 on the device rather than turning values into inf.
std::optional<std::vector<std::uint8_t>> converted_rows(const WeightView& w,
                                                        DeviceWeightType type) {
  const std::size_t elem = type == DeviceWeightType::F32 ? 4 : 2;
  std::vector<std::uint8_t> host(static_cast<std::size_t>(w.rows * w.cols) * elem);
  std::vector<float> row(static_cast<std::size_t>(w.cols));
  for (std::int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, w.row(r), row.data(), w.cols);
    std::uint8_t* dst = host.data() + static_cast<std::size_t>(r * w.cols) * elem;
    if (elem == 4) {
      std::memcpy(dst, row.data(), row.size() * 4);
      continue;
    }
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (std::fabs(row[c]) > 65504.0f) return std::nullopt;
      const std::uint16_t h = float_to_fp16(row[c]);
      std::memcpy(dst + 2 * c, &h, 2);
    }
  }
  return host;
}

}  // namespace

std::optional<std::vector<std::size_t>> stacked_offsets(const std::vector<DeviceWeight>& parts) {
  std::vector<std::size_t> offsets;
  std::size_t offset = 0;
  for (const DeviceWeight& w : parts) {
    const DeviceWeight& first = parts.front();
    if (w.type != first.type || w.cols != first.cols ||
        offset % static_cast<std::size_t>(device_weight_alignment(w.type)) != 0) {
      return std::nullopt;
    }
    offsets.push_back(offset);
    offset += static_cast<std::size_t>(w.row_bytes * w.rows);
  }
  offsets.push_back(offset);
  return offsets;
}

std::vector<const DeviceWeight*> DeviceModelWeights::projections() const {
  std::vector<const DeviceWeight*> out;
  if (output.data) out.push_back(&output);
  for (const DeviceLayerWeights& l : layers) {
    for (const DeviceWeight* w :
         {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down, &l.wqkv, &l.w_gate_up}) {
      if (w->data) out.push_back(w);
    }
  }
  return out;
}

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

DeviceModelWeights::DeviceModelWeights(const Model& model, DeviceAllocator& alloc, bool f32_as_f16,
                                       LayerRange range) {
  if (auto why = unsupported_weights(model)) throw_error<ModelError>("{}", *why);
  const ModelWeights& w = model.weights();
  const auto n_layers = static_cast<std::int64_t>(w.layers.size());
  const bool whole = range.whole(n_layers);
  const std::int64_t end = range.end_in(n_layers);
  if (whole) token_embd = matrix(w.token_embd, alloc, f32_as_f16);
  for (std::int64_t layer = 0; layer < n_layers; ++layer) {
    const LayerWeights& l = w.layers[static_cast<std::size_t>(layer)];
    DeviceLayerWeights d;
    if (layer < range.begin || layer >= end) {  // another backend's layer
      layers.push_back(d);
      continue;
    }
    d.attn_norm = vector(l.attn_norm, alloc);
    const std::vector<DeviceWeight> qkv = stackable({&l.wq, &l.wk, &l.wv}, alloc, f32_as_f16);
    d.wq = qkv[0], d.wk = qkv[1], d.wv = qkv[2], d.wqkv = qkv[3];
    d.wo = matrix(l.wo, alloc, f32_as_f16);
    if (l.bq) d.bq = vector(l.bq, alloc);
    if (l.bk) d.bk = vector(l.bk, alloc);
    if (l.bv) d.bv = vector(l.bv, alloc);
    if (l.q_norm) d.q_norm = vector(l.q_norm, alloc);
    if (l.k_norm) d.k_norm = vector(l.k_norm, alloc);
    if (l.post_attn_norm) d.post_attn_norm = vector(l.post_attn_norm, alloc);
    d.ffn_norm = vector(l.ffn_norm, alloc);
    if (l.post_ffn_norm) d.post_ffn_norm = vector(l.post_ffn_norm, alloc);
    const std::vector<DeviceWeight> gate_up = stackable({&l.w_gate, &l.w_up}, alloc, f32_as_f16);
    d.w_gate = gate_up[0], d.w_up = gate_up[1], d.w_gate_up = gate_up[2];
    d.w_down = matrix(l.w_down, alloc, f32_as_f16);
    layers.push_back(d);
  }
  if (end < n_layers) return;  // a part before the model's end: no output head
  output_norm = vector(w.output_norm, alloc);
  // tied embeddings: one copy serves both
  output = w.output.data == w.token_embd.data && token_embd.data
               ? token_embd
               : matrix(w.output, alloc, f32_as_f16);
}

DeviceModelWeights::HostMatrix DeviceModelWeights::prepare(const WeightView& w, bool f32_as_f16) {
  HostMatrix m;
  m.name = w.name;
  DeviceWeight& d = m.d;
  d.rows = w.rows;
  d.cols = w.cols;
  m.src = w.data;
  if (const auto stored = device_type_of(w.type)) {
    d.type = *stored;  // uploaded byte for byte: the kernels read the GGUF blocks in place
    const std::int64_t block = device_block_values(d.type);
    if (w.cols % block != 0) {
      throw_error<ModelError>("tensor {}: {} has {} columns, not a multiple of its {}-value block",
                              w.name, tensor_type_name(w.type), w.cols, block);
    }
  } else if (w.type == TensorType::F32 || w.type == TensorType::BF16) {
    d.type =
        w.type == TensorType::F32 && !f32_as_f16 ? DeviceWeightType::F32 : DeviceWeightType::F16;
    auto bytes = converted_rows(w, d.type);
    if (!bytes) {  // beyond fp16's range: f32 after all
      d.type = DeviceWeightType::F32;
      bytes = converted_rows(w, d.type);
    }
    m.converted = std::move(*bytes);
    m.src = m.converted.data();
  } else {
    throw_error<ModelError>("tensor {}: type {} has no CUDA kernel", w.name,
                            tensor_type_name(w.type));
  }
  d.row_bytes = device_row_bytes(d.type, d.cols);
  return m;
}

// Row r of the allocation is row r of the stacked matrix: every part starts at a row start,
// so each keeps the alignment its type's loads need (stacked_offsets checks it).
std::vector<DeviceWeight> DeviceModelWeights::upload(std::vector<HostMatrix> ms,
                                                     DeviceAllocator& alloc) {
  std::vector<DeviceWeight> parts;
  for (const HostMatrix& m : ms) parts.push_back(m.d);
  const std::vector<std::size_t> offsets = *stacked_offsets(parts);  // callers checked
  std::string name = ms.front().name;
  for (std::size_t i = 1; i < ms.size(); ++i) name += " + " + ms[i].name;
  buffers_.emplace_back(alloc, offsets.back(), DeviceMemoryCategory::Weights, name.c_str());
  DeviceBuffer& buffer = buffers_.back();
  std::vector<DeviceWeight> out;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    HostMatrix& m = ms[i];
    buffer.upload(m.src, offsets[i + 1] - offsets[i], offsets[i]);
    m.d.data = buffer.as<std::uint8_t>() + offsets[i];
    out.push_back(m.d);
  }
  return out;
}

DeviceWeight DeviceModelWeights::matrix(const WeightView& w, DeviceAllocator& alloc,
                                        bool f32_as_f16) {
  std::vector<HostMatrix> one;
  one.push_back(prepare(w, f32_as_f16));
  return upload(std::move(one), alloc).front();
}

std::vector<DeviceWeight> DeviceModelWeights::stackable(std::vector<const WeightView*> ws,
                                                        DeviceAllocator& alloc, bool f32_as_f16) {
  std::vector<HostMatrix> ms;
  std::vector<DeviceWeight> parts;
  for (const WeightView* w : ws) {
    ms.push_back(prepare(*w, f32_as_f16));
    parts.push_back(ms.back().d);
  }
  std::vector<DeviceWeight> out;
  if (!stacked_offsets(parts)) {
    for (HostMatrix& m : ms) {
      std::vector<HostMatrix> one;
      one.push_back(std::move(m));
      out.push_back(upload(std::move(one), alloc).front());
    }
    out.emplace_back();  // no stacked matrix
    return out;
  }
  out = upload(std::move(ms), alloc);
  DeviceWeight stacked = out.front();
  for (std::size_t i = 1; i < out.size(); ++i) stacked.rows += out[i].rows;
  out.push_back(stacked);
  return out;
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
