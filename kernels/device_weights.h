// The model's weights on the device. Matrices keep their GGUF encoding when a kernel reads
// it directly (F16 and every quantized type the CPU reads: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// Q4_K, Q5_K, Q6_K) and otherwise go as fp16 (F32, BF16; F32 may stay f32 when exact
// comparisons with the CPU are wanted); norm weights and biases go as f32.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "device_allocator.h"
#include "kernel_launchers.h"
#include "model/model.h"

namespace kvscope::cuda {

struct DeviceLayerWeights {
  const float* attn_norm = nullptr;  // [dim]
  DeviceWeight wq, wk, wv, wo;
  const float* bq = nullptr;        // [q_dim] or null
  const float* bk = nullptr;        // [kv_dim] or null
  const float* bv = nullptr;        // [kv_dim] or null
  const float* ffn_norm = nullptr;  // [dim]
  DeviceWeight w_gate, w_up, w_down;
};

class DeviceModelWeights {
 public:
  // Uploads every tensor (synchronously). CapacityError when the device lacks the memory;
  // ModelError naming the tensor when a quantized matrix's rows are not whole blocks.
  DeviceModelWeights(const Model& model, DeviceAllocator& alloc, bool f32_as_f16);

  DeviceWeight token_embd;
  std::vector<DeviceLayerWeights> layers;
  const float* output_norm = nullptr;
  DeviceWeight output;

 private:
  DeviceWeight matrix(const WeightView& w, DeviceAllocator& alloc, bool f32_as_f16);
  const float* vector(const WeightView& w, DeviceAllocator& alloc);

  std::vector<DeviceBuffer> buffers_;
};

// Why the CUDA backend cannot hold this model's weights (a tensor type it has no kernel
// for), or nullopt when it can.
std::optional<std::string> unsupported_weights(const Model& model);

}  // namespace kvscope::cuda
