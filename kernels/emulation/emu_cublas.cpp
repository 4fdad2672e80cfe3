// The cuBLAS stand-in of the CUDA emulation: cublasGemmEx computes what cuBLAS is asked to,
// C = alpha op(A) op(B) + beta C in column-major storage, from fp16 or fp32 inputs with fp32
// accumulation, queued on the handle's stream (so a captured graph records it like a kernel).
// The order of the sums is not cuBLAS's: tests compare GEMM results with a tolerance.
#include <cublas_v2.h>

#include <vector>

#include "emu_half.h"
#include "emu_internal.h"

struct cublasContext {
  cudaStream_t stream = nullptr;
};

namespace kvscope::emu {

namespace {

float element(const void* p, cudaDataType type, std::int64_t i) {
  if (type == CUDA_R_16F) return half_bits_to_float(static_cast<const unsigned short*>(p)[i]);
  return static_cast<const float*>(p)[i];
}

// op(M)(row, col) of a column-major matrix with leading dimension ld.
float op_element(const void* p, cudaDataType type, cublasOperation_t op, int ld, int row, int col) {
  const std::int64_t i =
      op == CUBLAS_OP_N ? row + std::int64_t{col} * ld : col + std::int64_t{row} * ld;
  return element(p, type, i);
}

}  // namespace

}  // namespace kvscope::emu

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void*, std::size_t) {
  return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* a, cudaDataType a_type, int lda, const void* b,
                            cudaDataType b_type, int ldb, const void* beta, void* c,
                            cudaDataType c_type, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t) {
  namespace emu = kvscope::emu;
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || !alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
  if (c_type != CUDA_R_32F || compute != CUBLAS_COMPUTE_32F ||
      (a_type != CUDA_R_16F && a_type != CUDA_R_32F) ||
      (b_type != CUDA_R_16F && b_type != CUDA_R_32F))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (lda < (transa == CUBLAS_OP_N ? m : k) || ldb < (transb == CUBLAS_OP_N ? k : n) || ldc < m)
    return CUBLAS_STATUS_INVALID_VALUE;
  // alpha and beta are host scalars: read now, as cuBLAS does in host pointer mode
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  static const char kTag = 0;
  const cudaError_t err = emu::submit(handle->stream, &kTag, [=]() -> cudaError_t {
    auto* out = static_cast<float*>(c);
    const auto K = static_cast<std::size_t>(k);
    std::vector<float> bt(K * static_cast<std::size_t>(n));  // op(B) column j at [j * K]
    for (int j = 0; j < n; ++j)
      for (int l = 0; l < k; ++l) bt[j * K + l] = emu::op_element(b, b_type, transb, ldb, l, j);
    std::vector<float> row(K);  // op(A) row i
    for (int i = 0; i < m; ++i) {
      for (int l = 0; l < k; ++l) row[l] = emu::op_element(a, a_type, transa, lda, i, l);
      for (int j = 0; j < n; ++j) {
        float s = 0.0f;
        for (std::size_t l = 0; l < K; ++l) s += row[l] * bt[j * K + l];
        float& y = out[i + std::int64_t{j} * ldc];
        y = be == 0.0f ? al * s : al * s + be * y;  // beta 0: C is not read (it may hold NaN)
      }
    }
    return cudaSuccess;
  });
  return err == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
