// Token embedding lookup: one CTA per token copies (dequantizes) its row of the table, for
// every device weight type (weight_element: bit for bit as the CPU's dequantize_row).
#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "ops/device_math.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kThreads = 256;

// x[t][c] = table[tokens[t]][c]. grid: n_tokens.
__global__ void embedding_kernel(DeviceWeight table, const int* tokens, float* x) {
  const int t = blockIdx.x;
  const auto* row = static_cast<const std::uint8_t*>(table.data) +
                    static_cast<std::int64_t>(tokens[t]) * table.row_bytes;
  float* out = x + static_cast<std::int64_t>(t) * table.cols;
  for (int c = threadIdx.x; c < table.cols; c += blockDim.x)
    out[c] = weight_element(table.type, row, c);
}

}  // namespace

void launch_embedding(const DeviceWeight& table, const int* tokens, int n_tokens, float* x,
                      cudaStream_t stream) {
  check_device_weight(table, "launch_embedding");
  if (n_tokens <= 0) return;
  launch_kernel(embedding_kernel, n_tokens, kThreads, 0, stream, table, tokens, x);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
