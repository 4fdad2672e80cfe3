#include "ops/gemm.h"

#include <algorithm>

#include "backend/cuda_check.h"
#include "ops/cublas_library.h"
#include "plan/cuda_workspace.h"

namespace kvscope::cuda {

namespace {

constexpr auto kWorkspace = DeviceMemoryCategory::Workspace;

// cuBLAS's recommended workspace on this device (the planner's rule: 32 MiB from sm_90 on,
// 4 MiB before).
std::size_t device_cublas_workspace_bytes(int device) {
  int major = 0;
  KVSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return static_cast<std::size_t>(cublas_workspace_bytes(major));
}

}  // namespace

std::int64_t gemm_slab_rows(std::int64_t rows, std::int64_t cols, std::size_t scratch_bytes) {
  return cuda_gemm_slab_rows(rows, cols, static_cast<std::int64_t>(scratch_bytes));
}

ProjectionGemm::ProjectionGemm(DeviceAllocator& alloc, cudaStream_t stream,
                               std::size_t weight_scratch_bytes)
    : alloc_(alloc), stream_(stream), weight_scratch_bytes_(weight_scratch_bytes) {
  const CublasLibrary& cublas = cublas_library();
  KVSCOPE_CUBLAS_CHECK(cublas.create(&handle_));
  try {
    KVSCOPE_CUBLAS_CHECK(cublas.set_stream(handle_, stream_));
    const std::size_t ws = device_cublas_workspace_bytes(alloc_.device());
    workspace_ = DeviceBuffer(alloc_, ws, kWorkspace, "cuBLAS workspace");
    KVSCOPE_CUBLAS_CHECK(cublas.set_workspace(handle_, workspace_.get(), ws));
  } catch (...) {
    cublas.destroy(handle_);
    throw;
  }
}

ProjectionGemm::~ProjectionGemm() {
  if (handle_) cublas_library().destroy(handle_);
}

void ProjectionGemm::reserve(std::int64_t n_tokens, std::int64_t max_cols,
                             std::size_t weight_slab_bytes) {
  x16_.reserve(alloc_, static_cast<std::size_t>(n_tokens * max_cols) * 2, kWorkspace,
               "fp16 activations for cuBLAS");
  if (weight_slab_bytes > 0) {
    w16_.reserve(alloc_, weight_slab_bytes, kWorkspace, "fp16 weight slab for cuBLAS");
  }
}

std::size_t ProjectionGemm::slab_bytes(const DeviceWeight& w) const {
  if (w.type == DeviceWeightType::F16) return 0;
  return static_cast<std::size_t>(gemm_slab_rows(w.rows, w.cols, weight_scratch_bytes_) * w.cols) *
         2;
}

// Row-major Y [T][R] = X [T][C] W^T, W row-major [R][C]. cuBLAS is column-major, where the
// same bytes are Y' [R x T] (ld R), W' [C x R] (ld C) and X' [C x T] (ld C), so
// Y' = W'^T X': op(A) = T on W, op(B) = N on X. A slab of rows [r0, r0 + n) of W gives rows
// [r0, r0 + n) of Y': m = n, C pointer y + r0, ldc still R.
void ProjectionGemm::run(const DeviceWeight& w, const float* x, int n_tokens, float* y,
                         bool accumulate) {
  if (n_tokens <= 0 || w.rows <= 0) return;
  const std::int64_t R = w.rows, C = w.cols;
  reserve(n_tokens, C, slab_bytes(w));
  launch_float_to_half(x, n_tokens * C, x16_.as<std::uint16_t>(), stream_);

  const std::int64_t slab =
      w.type == DeviceWeightType::F16 ? R : gemm_slab_rows(R, C, weight_scratch_bytes_);
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  for (std::int64_t r0 = 0; r0 < R; r0 += slab) {
    const std::int64_t n = std::min(slab, R - r0);
    const void* a = nullptr;
    if (w.type == DeviceWeightType::F16) {
      a = static_cast<const std::uint8_t*>(w.data) + r0 * w.row_bytes;
    } else {
      launch_dequantize_f16(w, r0, n, w16_.as<std::uint16_t>(), stream_);
      a = w16_.get();
    }
    KVSCOPE_CUBLAS_CHECK(cublas_library().gemm_ex(
        handle_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), n_tokens, static_cast<int>(C),
        &alpha, a, CUDA_R_16F, static_cast<int>(C), x16_.get(), CUDA_R_16F, static_cast<int>(C),
        &beta, y + r0, CUDA_R_32F, static_cast<int>(R), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
}

}  // namespace kvscope::cuda
