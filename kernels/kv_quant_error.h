// The KV cache's measured quantization error on the device: after launch_kv_append, each
// new token's stored K and V are read back through the same element functions attention
// uses and compared with the exact f32 values, as kv_slot_quant_error does on the CPU, so
// the live panel's error figures are measured on a GPU too.
#pragma once

#include <cuda_runtime.h>

#include "kernel_launchers.h"

namespace kvscope::cuda {

// Sums of one layer: what the CPU's QuantErrorSums hold for K and for V, without the count
// (n_tokens * n_kv_heads * head_dim per side, known on the host).
struct KvErrorSums {
  double k_sq_error = 0.0, k_sq_exact = 0.0;
  double v_sq_error = 0.0, v_sq_exact = 0.0;
};

// Adds the error of the n_tokens slots launch_kv_append just wrote (the same layout, tables,
// k and v) to *sums (device memory, zeroed by the caller; atomic adds, so the last digits of
// the sums vary from run to run, never their meaning).
void launch_kv_quant_error(const KvLayerLayout& layout, const KvStepTables& tables, const float* k,
                           const float* v, int n_tokens, KvErrorSums* sums, cudaStream_t stream);

}  // namespace kvscope::cuda
