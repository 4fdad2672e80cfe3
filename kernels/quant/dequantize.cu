// Stored weight rows as fp16 on the device: the scratch a cuBLAS GEMM reads for prompt
// chunks (gemm.h dequantizes a slab of rows at a time), and the geometry of the device
// weight types that every launcher checks its weights against.
#include <algorithm>
#include <string>

#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "ops/device_math.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kGroup = 8;  // values per thread: one 16-byte store of 8 fp16
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;

struct F32Values {
  __device__ static float at(const std::uint8_t* row, std::int64_t c) {
    return reinterpret_cast<const float*>(row)[c];
  }
};

template <class Codec>
struct QuantValues {
  __device__ static float at(const std::uint8_t* row, std::int64_t c) {
    return qd::row_value<Codec>(row, c);
  }
};

// out[r][c0 .. c0 + 8) = fp16(values of row row0 + r), one group of 8 per thread (grid-stride).
// vec: cols % 8 == 0 and out 16-byte aligned, so each group is one aligned uint4 store;
// otherwise the groups are stored value by value and the last one of a row is cut at cols.
template <class Values>
__global__ void dequantize_f16_kernel(DeviceWeight w, std::int64_t row0, std::int64_t n_rows,
                                      std::uint16_t* out, bool vec) {
  const std::int64_t groups = (w.cols + kGroup - 1) / kGroup;
  const std::int64_t total = n_rows * groups;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < total;
       g += stride) {
    const std::int64_t r = g / groups, c0 = (g % groups) * kGroup;
    const auto* row = static_cast<const std::uint8_t*>(w.data) + (row0 + r) * w.row_bytes;
    std::uint16_t* o = out + r * w.cols + c0;
    std::uint32_t h[kGroup];
#pragma unroll
    for (int e = 0; e < kGroup; ++e) {
      h[e] = c0 + e < w.cols ? float_to_half_bits(Values::at(row, c0 + e)) : 0u;
    }
    if (vec) {
      *reinterpret_cast<uint4*>(o) = make_uint4(h[0] | (h[1] << 16), h[2] | (h[3] << 16),
                                                h[4] | (h[5] << 16), h[6] | (h[7] << 16));
    } else {
      for (int e = 0; e < kGroup && c0 + e < w.cols; ++e) o[e] = static_cast<std::uint16_t>(h[e]);
    }
  }
}

}  // namespace

std::int64_t device_block_values(DeviceWeightType type) {
  std::int64_t n = 1;
  with_quant_codec(type, [&]<class Codec>() { n = Codec::kValues; });
  return n;
}

std::int64_t device_row_bytes(DeviceWeightType type, std::int64_t cols) {
  if (type == DeviceWeightType::F32) return 4 * cols;
  if (type == DeviceWeightType::F16) return 2 * cols;
  std::int64_t bytes = 0;
  with_quant_codec(type, [&]<class Codec>() { bytes = cols / Codec::kValues * Codec::kBytes; });
  return bytes;
}

const char* device_weight_type_name(DeviceWeightType type) {
  const char* name = type == DeviceWeightType::F32 ? "f32" : "f16";
  with_quant_codec(type, [&]<class Codec>() { name = Codec::kName; });
  return name;
}

std::int64_t device_weight_alignment(DeviceWeightType type) {
  std::int64_t align = type == DeviceWeightType::F32 ? 4 : 2;
  with_quant_codec(type, [&]<class Codec>() { align = Codec::kAlign; });
  return align;
}

void check_device_weight(const DeviceWeight& w, const char* launcher) {
  const std::int64_t block = device_block_values(w.type);
  const std::int64_t row_bytes = device_row_bytes(w.type, w.cols);
  const bool whole_blocks = w.rows >= 0 && w.cols > 0 && w.cols % block == 0;
  const std::int64_t align = device_weight_alignment(w.type);
  const bool aligned = reinterpret_cast<std::uintptr_t>(w.data) % align == 0;
  if (whole_blocks && w.row_bytes == row_bytes && aligned) return;  // the per-launch path
  const std::string what = std::string(launcher) + ": " + device_weight_type_name(w.type) +
                           " weight of " + std::to_string(w.rows) + " x " + std::to_string(w.cols);
  if (!whole_blocks) {
    throw_usage_error(what + ": columns must be a positive multiple of " + std::to_string(block));
  }
  if (w.row_bytes != row_bytes) {
    throw_usage_error(what + ": row_bytes " + std::to_string(w.row_bytes) + ", expected " +
                      std::to_string(row_bytes));
  }
  throw_usage_error(what + ": data must be " + std::to_string(align) + "-byte aligned");
}

void launch_dequantize_f16(const DeviceWeight& w, std::int64_t row0, std::int64_t n_rows,
                           std::uint16_t* out, cudaStream_t stream) {
  check_device_weight(w, "launch_dequantize_f16");
  if (row0 < 0 || n_rows < 0 || row0 + n_rows > w.rows) {
    throw_usage_error("launch_dequantize_f16: rows [" + std::to_string(row0) + ", " +
                      std::to_string(row0 + n_rows) + ") of a weight of " + std::to_string(w.rows) +
                      " rows");
  }
  if (n_rows == 0) return;
  const auto* src = static_cast<const std::uint8_t*>(w.data) + row0 * w.row_bytes;
  if (w.type == DeviceWeightType::F16) {  // already fp16: the rows are one contiguous range
    KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(out, src, static_cast<std::size_t>(n_rows * w.row_bytes),
                                       cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const bool vec = w.cols % kGroup == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  const std::int64_t groups = n_rows * ((w.cols + kGroup - 1) / kGroup);
  const auto blocks =
      static_cast<unsigned>(std::min(kMaxBlocks, (groups + kThreads - 1) / kThreads));
  const bool launched = with_quant_codec(w.type, [&]<class Codec>() {
    launch_kernel(dequantize_f16_kernel<QuantValues<Codec>>, blocks, kThreads, 0, stream, w, row0,
                  n_rows, out, vec);
  });
  if (!launched) {  // F32
    launch_kernel(dequantize_f16_kernel<F32Values>, blocks, kThreads, 0, stream, w, row0, n_rows,
                  out, vec);
  }
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
