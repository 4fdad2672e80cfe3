// Token embedding lookup: one CTA per token copies (dequantizes) its row of the table.
#include "cuda_check.h"
#include "device_math.cuh"

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

std::int64_t device_row_bytes(DeviceWeightType type, std::int64_t cols) {
  switch (type) {
    case DeviceWeightType::F32:
      return 4 * cols;
    case DeviceWeightType::F16:
      return 2 * cols;
    case DeviceWeightType::Q8_0:
      return cols / 32 * 34;
    case DeviceWeightType::Q4_0:
      return cols / 32 * 18;
  }
  return 0;
}

void launch_embedding(const DeviceWeight& table, const int* tokens, int n_tokens, float* x,
                      cudaStream_t stream) {
  if (n_tokens <= 0) return;
  embedding_kernel<<<n_tokens, kThreads, 0, stream>>>(table, tokens, x);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
