// Matrix-vector products y = W x straight from the stored weights: one warp per output row,
// the row dequantized on the fly (F32, F16, Q8_0, Q4_0), x read from L1/L2. Decode is
// bandwidth-bound on reading W, so each weight byte is read once per token. Prompt chunks
// run the same kernel with one grid row per token (W is re-read from L2 per token); a
// cuBLAS GEMM path for prompts is the next step (issue 7).
#include "cuda_check.h"
#include "device_math.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;

// Partial dot products of one lane over a row; the warp sums them.
__device__ inline float lane_dot_f32(const float* w, const float* x, int cols, int lane) {
  float s = 0.0f;
  for (int c = lane; c < cols; c += kWarp) s += w[c] * x[c];
  return s;
}

__device__ inline float lane_dot_f16(const std::uint16_t* w, const float* x, int cols, int lane) {
  float s = 0.0f;
  for (int c = lane; c < cols; c += kWarp) s += half_bits_to_float(w[c]) * x[c];
  return s;
}

// Lane handles whole 32-value blocks: d * sum_j qs[j] * x[j].
__device__ inline float lane_dot_q8_0(const std::uint8_t* w, const float* x, int cols, int lane) {
  float s = 0.0f;
  for (int b = lane; b < cols / 32; b += kWarp) {
    const std::uint8_t* blk = w + b * 34;
    const float* xb = x + b * 32;
    float d = 0.0f;
#pragma unroll 8
    for (int j = 0; j < 32; ++j)
      d += static_cast<float>(static_cast<std::int8_t>(blk[2 + j])) * xb[j];
    s += load_half_unaligned(blk) * d;
  }
  return s;
}

// qs[j] holds value j (low nibble) and j + 16 (high), each stored as q + 8.
__device__ inline float lane_dot_q4_0(const std::uint8_t* w, const float* x, int cols, int lane) {
  float s = 0.0f;
  for (int b = lane; b < cols / 32; b += kWarp) {
    const std::uint8_t* blk = w + b * 18;
    const float* xb = x + b * 32;
    float d = 0.0f;
#pragma unroll 8
    for (int j = 0; j < 16; ++j) {
      const int byte = blk[2 + j];
      d += static_cast<float>((byte & 0x0f) - 8) * xb[j] +
           static_cast<float>((byte >> 4) - 8) * xb[j + 16];
    }
    s += load_half_unaligned(blk) * d;
  }
  return s;
}

// grid: (rows / kWarpsPerBlock, n_tokens). One warp per (row, token).
template <DeviceWeightType kType>
__global__ void matvec_kernel(DeviceWeight w, const float* x, float* y) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t r =
      static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  if (r >= w.rows) return;
  const int t = blockIdx.y;
  const auto* row = static_cast<const std::uint8_t*>(w.data) + r * w.row_bytes;
  const float* xt = x + static_cast<std::int64_t>(t) * w.cols;
  const int cols = static_cast<int>(w.cols);
  float s = 0.0f;
  if constexpr (kType == DeviceWeightType::F32) {
    s = lane_dot_f32(reinterpret_cast<const float*>(row), xt, cols, lane);
  } else if constexpr (kType == DeviceWeightType::F16) {
    s = lane_dot_f16(reinterpret_cast<const std::uint16_t*>(row), xt, cols, lane);
  } else if constexpr (kType == DeviceWeightType::Q8_0) {
    s = lane_dot_q8_0(row, xt, cols, lane);
  } else {
    s = lane_dot_q4_0(row, xt, cols, lane);
  }
  s = warp_sum(s);
  if (lane == 0) y[static_cast<std::int64_t>(t) * w.rows + r] = s;
}

}  // namespace

void launch_matvec(const DeviceWeight& w, const float* x, int n_tokens, float* y,
                   cudaStream_t stream) {
  if (n_tokens <= 0 || w.rows <= 0) return;
  const dim3 grid(blocks_for(w.rows, kWarpsPerBlock), static_cast<unsigned>(n_tokens));
  const int threads = kWarpsPerBlock * kWarp;
  switch (w.type) {  // the one dtype dispatch of the projections
    case DeviceWeightType::F32:
      matvec_kernel<DeviceWeightType::F32><<<grid, threads, 0, stream>>>(w, x, y);
      break;
    case DeviceWeightType::F16:
      matvec_kernel<DeviceWeightType::F16><<<grid, threads, 0, stream>>>(w, x, y);
      break;
    case DeviceWeightType::Q8_0:
      matvec_kernel<DeviceWeightType::Q8_0><<<grid, threads, 0, stream>>>(w, x, y);
      break;
    case DeviceWeightType::Q4_0:
      matvec_kernel<DeviceWeightType::Q4_0><<<grid, threads, 0, stream>>>(w, x, y);
      break;
  }
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
