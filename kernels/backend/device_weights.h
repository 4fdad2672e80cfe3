// The model's weights on the device. Matrices keep their GGUF encoding when a kernel reads
// it directly (F16 and every quantized type the CPU reads: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// Q4_K, Q5_K, Q6_K) and otherwise go as fp16 (F32, BF16; F32 may stay f32 when exact
// comparisons with the CPU are wanted); norm weights and biases go as f32.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend/device_allocator.h"
#include "backend/kernel_launchers.h"
#include "model/model.h"
#include "run/backend.h"

namespace kvscope::cuda {

struct DeviceLayerWeights {
  const float* attn_norm = nullptr;  // [dim]
  DeviceWeight wq, wk, wv, wo;
  // wq, wk and wv as one matrix of q_dim + 2 kv_dim rows, stacked in one allocation, when the
  // three share a type and width (data null otherwise): a decode token's Q, K and V in one
  // launch, written [q | k | v]. w_gate_up likewise: [gate | up], 2 ffn_dim rows.
  DeviceWeight wqkv, w_gate_up;
  const float* bq = nullptr;              // [q_dim] or null
  const float* bk = nullptr;              // [kv_dim] or null
  const float* bv = nullptr;              // [kv_dim] or null
  const float* q_norm = nullptr;          // [head_dim] or null: q's per-head norm (Qwen 3, Gemma 3)
  const float* k_norm = nullptr;          // [head_dim] or null
  const float* post_attn_norm = nullptr;  // [dim] or null: the attention output's norm (Gemma)
  const float* ffn_norm = nullptr;        // [dim]
  const float* post_ffn_norm = nullptr;   // [dim] or null
  DeviceWeight w_gate, w_up, w_down;
};

class DeviceModelWeights {
 public:
  // Uploads every tensor (synchronously). CapacityError when the device lacks the memory;
  // ModelError naming the tensor when a quantized matrix's rows are not whole blocks.
  // A part of the model (`layers` not the whole, run/split_backend.h) uploads only its
  // layers, and the output head when it ends the model; the embedding table stays on the
  // host (the CPU embeds), and the other layers' entries stay empty.
  DeviceModelWeights(const Model& model, DeviceAllocator& alloc, bool f32_as_f16,
                     LayerRange layers = {});

  DeviceWeight token_embd;
  std::vector<DeviceLayerWeights> layers;
  const float* output_norm = nullptr;
  DeviceWeight output;

  // Every matrix a projection reads: the output (when held), each layer's seven and its
  // stacked ones that exist.
  std::vector<const DeviceWeight*> projections() const;

 private:
  // A matrix as the device will hold it: its DeviceWeight (data not set yet) and the bytes
  // to upload (the file's, or a converted copy).
  struct HostMatrix {
    DeviceWeight d;
    std::vector<std::uint8_t> converted;
    const void* src = nullptr;
    std::string name;
  };
  static HostMatrix prepare(const WeightView& w, bool f32_as_f16);
  // Uploads the matrices into one allocation, each right after the previous one's last row;
  // returns them pointing into it, in order.
  std::vector<DeviceWeight> upload(std::vector<HostMatrix> ms, DeviceAllocator& alloc);
  DeviceWeight matrix(const WeightView& w, DeviceAllocator& alloc, bool f32_as_f16);
  // The matrices, stacked into one allocation (and returned as one more DeviceWeight, last)
  // when they share type and width; else uploaded apart, with an empty stacked weight last.
  std::vector<DeviceWeight> stackable(std::vector<const WeightView*> ws, DeviceAllocator& alloc,
                                      bool f32_as_f16);
  const float* vector(const WeightView& w, DeviceAllocator& alloc);

  std::vector<DeviceBuffer> buffers_;
};

// Where each of `parts` starts when they are stacked into one allocation, each right after
// the previous one's last row (byte offsets, then the allocation's size), or nullopt when
// they cannot be one matrix: their types or widths differ, or a part would start at an
// offset its type's loads cannot read (device_weight_alignment). Each offset is a multiple of
// the row size, which is a multiple of the type's alignment, so the last never happens for
// parts with whole blocks; it is checked all the same, and such parts are uploaded apart.
std::optional<std::vector<std::size_t>> stacked_offsets(const std::vector<DeviceWeight>& parts);

// Why the CUDA backend cannot hold this model's weights (a tensor type it has no kernel
// for), or nullopt when it can.
std::optional<std::string> unsupported_weights(const Model& model);

}  // namespace kvscope::cuda
