// Matrix-vector products y = W x straight from the stored weights, the row dequantized on the
// fly, x read through L1. Decode is bandwidth-bound on reading W, so each weight byte is read
// once per token, by a warp walking its row front to back in contiguous runs:
//   F32 / F16: one warp per row, each lane a 16-byte load per step (4 floats / 8 halves)
//              when the row and x are 16-byte aligned, element by element otherwise;
//   quantized: kRowsPerWarp rows per warp, every block split over kParts lanes
//              (quant_dequant.h lane_dots, the exact per-lane code the CPU tests check),
//              so one load of x serves every row of the warp.
// Prompt chunks run the same kernels with one grid row per token (W re-read from L2 per
// token); long prompts go through cuBLAS on an fp16 scratch instead (gemm.h).
// launch_matvec_q8 runs the quantized kernel on activations given as 8-bit codes
// (quant_activations.h): the weight quants meet the codes in integer dot products (dp4a),
// four weights an instruction, instead of a dequantize, a conversion and a float
// multiply-add per weight, which would bound decode below the bandwidth of GPUs with many
// bytes per SM clock.
#include <string>

#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "ops/device_math.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;  // F32 / F16: one row per warp
constexpr int kQuantWarps = 4;     // quantized: kRowsPerWarp rows per warp
constexpr int kRowsPerWarp = 2;

// y = s, or y += s: the residual connection folded into the projection (the same float
// addition as a separate add kernel, one launch fewer per projection).
__device__ inline void store(float* y, float s, bool accumulate) {
  *y = accumulate ? *y + s : s;
}

// vec: cols % 4 == 0 and w, x 16-byte aligned, so every float4 below is aligned.
__device__ inline float lane_dot_f32(const float* w, const float* x, int cols, int lane, bool vec) {
  float s = 0.0f;
  if (vec) {
#pragma unroll 4
    for (int c = 4 * lane; c < cols; c += 4 * kWarp) {
      const float4 a = __ldg(reinterpret_cast<const float4*>(w + c));
      const float4 b = __ldg(reinterpret_cast<const float4*>(x + c));
      s += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    }
  } else {
#pragma unroll 4
    for (int c = lane; c < cols; c += kWarp) s += w[c] * x[c];
  }
  return s;
}

// sum_k half k of word * x[k], k < 2 (little-endian: half 0 is the low 16 bits).
__device__ inline float dot_half2(unsigned word, float x0, float x1) {
  return half_bits_to_float(static_cast<std::uint16_t>(word & 0xffffu)) * x0 +
         half_bits_to_float(static_cast<std::uint16_t>(word >> 16)) * x1;
}

// vec: cols % 8 == 0 and w, x 16-byte aligned: 8 halves (one uint4) and 2 float4 per step,
// 4 steps unrolled so their loads are in flight together.
__device__ inline float lane_dot_f16(const std::uint16_t* w, const float* x, int cols, int lane,
                                     bool vec) {
  float s = 0.0f;
  if (vec) {
#pragma unroll 4
    for (int c = 8 * lane; c < cols; c += 8 * kWarp) {
      const uint4 h = __ldg(reinterpret_cast<const uint4*>(w + c));
      const float4 a = __ldg(reinterpret_cast<const float4*>(x + c));
      const float4 b = __ldg(reinterpret_cast<const float4*>(x + c + 4));
      s += dot_half2(h.x, a.x, a.y) + dot_half2(h.y, a.z, a.w) + dot_half2(h.z, b.x, b.y) +
           dot_half2(h.w, b.z, b.w);
    }
  } else {
#pragma unroll 4
    for (int c = lane; c < cols; c += kWarp) s += half_bits_to_float(w[c]) * x[c];
  }
  return s;
}

// grid: (rows / kWarpsPerBlock, n_tokens). One warp per (row, token).
template <DeviceWeightType kType>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp, 2)
    matvec_float_kernel(DeviceWeight w, const float* x, float* y, bool vec, bool accumulate) {
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
    s = lane_dot_f32(reinterpret_cast<const float*>(row), xt, cols, lane, vec);
  } else {
    s = lane_dot_f16(reinterpret_cast<const std::uint16_t*>(row), xt, cols, lane, vec);
  }
  s = warp_sum(s);
  if (lane == 0) store(y + static_cast<std::int64_t>(t) * w.rows + r, s, accumulate);
}

// grid: (rows / (kQuantWarps * kRowsPerWarp), n_tokens). One warp per kRowsPerWarp rows and a
// token. The launch bounds (up to 128 registers) let ptxas keep kUnroll steps of loads in
// flight (lane_dots) instead of trading them for occupancy that decode never has. A warp
// past the last row recomputes the last row for its missing ones and does not store them, so
// every lane runs the same loop (the shuffles need the whole warp). Acts: the float
// activations or their 8-bit codes (quant_dequant.h).
template <class Codec, class Acts>
__global__ void __launch_bounds__(kQuantWarps* kWarp, 4)
    matvec_quant_kernel(DeviceWeight w, Acts acts, float* y, bool accumulate) {
  const int lane = threadIdx.x % kWarp;
  const std::int64_t r0 =
      (static_cast<std::int64_t>(blockIdx.x) * kQuantWarps + threadIdx.x / kWarp) * kRowsPerWarp;
  if (r0 >= w.rows) return;
  const int t = blockIdx.y;
  const auto* base = static_cast<const std::uint8_t*>(w.data);
  const std::uint8_t* rows[kRowsPerWarp];
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    rows[i] = base + (r0 + i < w.rows ? r0 + i : w.rows - 1) * w.row_bytes;
  }
  float acc[kRowsPerWarp] = {};
  qd::lane_dots<Codec, kRowsPerWarp>(rows, acts.token(t, w.cols),
                                     static_cast<int>(w.cols / Codec::kValues), lane, acc);
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const float s = warp_sum(acc[i]);
    if (lane == 0 && r0 + i < w.rows) {
      store(y + static_cast<std::int64_t>(t) * w.rows + r0 + i, s, accumulate);
    }
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

void check_columns(const DeviceWeight& w, const char* launcher) {
  check_device_weight(w, launcher);
  if (w.cols > (std::int64_t{1} << 30)) {
    throw_usage_error(std::string(launcher) + ": " + std::to_string(w.cols) +
                      " columns is too many");
  }
}

dim3 quant_grid(const DeviceWeight& w, int n_tokens) {
  return {blocks_for(w.rows, kQuantWarps * kRowsPerWarp), static_cast<unsigned>(n_tokens)};
}

}  // namespace

void launch_matvec(const DeviceWeight& w, const float* x, int n_tokens, float* y,
                   cudaStream_t stream, bool accumulate) {
  check_columns(w, "launch_matvec");
  if (is_quantized(w.type) && !aligned16(x)) {
    throw_usage_error(std::string("launch_matvec: x of a ") + device_weight_type_name(w.type) +
                      " product must be 16-byte aligned");
  }
  if (n_tokens <= 0 || w.rows <= 0) return;
  const unsigned tokens = static_cast<unsigned>(n_tokens);
  const bool launched = with_quant_codec(w.type, [&]<class Codec>() {
    using Acts = qd::FloatActivations<Codec>;
    launch_kernel(matvec_quant_kernel<Codec, Acts>, quant_grid(w, n_tokens), kQuantWarps * kWarp, 0,
                  stream, w, Acts{x}, y, accumulate);
  });
  if (!launched) {
    const dim3 grid(blocks_for(w.rows, kWarpsPerBlock), tokens);
    const bool aligned = aligned16(w.data) && aligned16(x);
    if (w.type == DeviceWeightType::F32) {
      launch_kernel(matvec_float_kernel<DeviceWeightType::F32>, grid, kWarpsPerBlock * kWarp, 0,
                    stream, w, x, y, aligned && w.cols % 4 == 0, accumulate);
    } else {
      launch_kernel(matvec_float_kernel<DeviceWeightType::F16>, grid, kWarpsPerBlock * kWarp, 0,
                    stream, w, x, y, aligned && w.cols % 8 == 0, accumulate);
    }
  }
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

void launch_matvec_q8(const DeviceWeight& w, const std::int8_t* q, const float* d, int n_tokens,
                      float* y, cudaStream_t stream, bool accumulate) {
  check_columns(w, "launch_matvec_q8");
  if (reinterpret_cast<std::uintptr_t>(q) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(d) % 16 != 0) {
    throw_usage_error("launch_matvec_q8: the activation codes and scales must be 16-byte aligned");
  }
  if (n_tokens <= 0 || w.rows <= 0) return;
  const bool launched = with_quant_codec(w.type, [&]<class Codec>() {
    using Acts = qd::Q8Activations<Codec>;
    launch_kernel(matvec_quant_kernel<Codec, Acts>, quant_grid(w, n_tokens), kQuantWarps * kWarp, 0,
                  stream, w, Acts{q, d}, y, accumulate);
  });
  if (!launched) {
    throw_usage_error(std::string("launch_matvec_q8: ") + device_weight_type_name(w.type) +
                      " weights have no 8-bit activation kernel (a float type)");
  }
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
