// y = W x for quantized W with x as 8-bit codes (quant_activations.h, launch_quantize_q8):
// the weight quants meet the activation codes in integer dot products (dp4a), four weights
// an instruction, instead of each weight being dequantized, converted and multiplied in
// float (matvec.cu). The same walk as matvec.cu's quantized kernel: kRowsPerWarp rows a
// warp, every block split over Codec::kParts lanes (quant_dequant.h lane_dots_q8, checked
// lane by lane on the CPU), one load of the codes serving every row of the warp.
#include <string>

#include "cuda_check.h"
#include "device_math.cuh"
#include "kernel_launchers.h"
#include "quant_activations.h"

namespace kvscope::cuda {

namespace {

constexpr int kQuantWarps = 4;
constexpr int kRowsPerWarp = 2;

// grid: (rows / (kQuantWarps * kRowsPerWarp), n_tokens). A warp past the last row recomputes
// the last row for its missing ones and does not store them (the shuffles need every lane).
template <class Codec>
__global__ void __launch_bounds__(kQuantWarps* kWarp, 4)
    matvec_q8_kernel(DeviceWeight w, const std::int8_t* q, const float* ds, float* y,
                     bool accumulate) {
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
  const std::int64_t cols = w.cols;
  float acc[kRowsPerWarp] = {};
  qd::lane_dots_q8<Codec, kRowsPerWarp>(rows, q + t * cols, ds + t * (cols / qd::kQ8Block) * 2,
                                        static_cast<int>(cols / Codec::kValues), lane, acc);
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const float s = warp_sum(acc[i]);
    if (lane == 0 && r0 + i < w.rows) {
      float* out = y + static_cast<std::int64_t>(t) * w.rows + r0 + i;
      *out = accumulate ? *out + s : s;
    }
  }
}

}  // namespace

void launch_matvec_q8(const DeviceWeight& w, const std::int8_t* q, const float* ds, int n_tokens,
                      float* y, cudaStream_t stream, bool accumulate) {
  check_device_weight(w, "launch_matvec_q8");
  if (w.cols > (std::int64_t{1} << 30)) {
    throw_usage_error("launch_matvec_q8: " + std::to_string(w.cols) + " columns is too many");
  }
  if (reinterpret_cast<std::uintptr_t>(q) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(ds) % 16 != 0) {
    throw_usage_error("launch_matvec_q8: the activation codes and scales must be 16-byte aligned");
  }
  if (n_tokens <= 0 || w.rows <= 0) return;
  const bool launched = with_quant_codec(w.type, [&]<class Codec>() {
    const dim3 grid(blocks_for(w.rows, kQuantWarps * kRowsPerWarp),
                    static_cast<unsigned>(n_tokens));
    matvec_q8_kernel<Codec><<<grid, kQuantWarps * kWarp, 0, stream>>>(w, q, ds, y, accumulate);
  });
  if (!launched) {
    throw_usage_error(std::string("launch_matvec_q8: ") + device_weight_type_name(w.type) +
                      " weights have no 8-bit activation kernel (a float type)");
  }
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
