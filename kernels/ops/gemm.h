// Projections of prompt chunks through cuBLAS: Y = X W^T with fp16 inputs and fp32
// accumulation on the tensor cores, where the matvec kernels would re-read W once per token.
// F16 weights are read in place; every other type is dequantized to fp16 a slab of rows at a
// time into a bounded scratch buffer (launch_dequantize_f16), so no full-size fp16 copy of a
// quantized model is ever made. The activations are rounded to fp16 first, as llama.cpp does
// for its cuBLAS path. The backend uses it for steps of gemm_min_tokens tokens or more:
// prompt chunks, and decode batches of that many sequences (so a sequence's logits differ in
// the last bits when the batch it decodes in crosses that size, as in llama.cpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backend/device_allocator.h"
#include "backend/kernel_launchers.h"

struct cublasContext;  // cublasHandle_t, without cublas_v2.h in every includer

namespace kvscope::cuda {

// x16[i] = fp16(x[i]) rounded to nearest even, as float_to_fp16, saturated to +-65504 (NaN
// stays NaN). x, x16: [n].
void launch_float_to_half(const float* x, std::int64_t n, std::uint16_t* x16, cudaStream_t stream);

// Rows of W dequantized per cuBLAS call: as many as fit `scratch_bytes` of fp16, at least one.
std::int64_t gemm_slab_rows(std::int64_t rows, std::int64_t cols, std::size_t scratch_bytes);

class ProjectionGemm {
 public:
  // Creates the cuBLAS handle on `stream` with its workspace taken from `alloc` (category
  // Workspace), so the VRAM panel counts it. weight_scratch_bytes bounds the fp16 slab of a
  // dequantized weight. Throws Error when cuBLAS cannot start.
  ProjectionGemm(DeviceAllocator& alloc, cudaStream_t stream,
                 std::size_t weight_scratch_bytes = std::size_t{64} << 20);
  ~ProjectionGemm();
  ProjectionGemm(const ProjectionGemm&) = delete;
  ProjectionGemm& operator=(const ProjectionGemm&) = delete;

  // Sizes the scratch for steps of up to n_tokens tokens through matrices of up to max_cols
  // columns, `weight_slab_bytes` of fp16 weights (0 when every matrix is F16). A graph
  // capture cannot allocate: the backend reserves before every step, run() then never does.
  void reserve(std::int64_t n_tokens, std::int64_t max_cols, std::size_t weight_slab_bytes);
  // The fp16 slab bytes `w` needs: its whole fp16 copy, at most weight_scratch_bytes; 0 for F16.
  std::size_t slab_bytes(const DeviceWeight& w) const;
  // The scratch addresses run() passes to kernels and cuBLAS (they belong in a graph's key).
  const void* activations_scratch() const { return x16_.get(); }
  const void* weight_scratch() const { return w16_.get(); }

  // y[t][r] = sum_c W[r][c] * x[t][c] for t < n_tokens, or y[t][r] += that with accumulate
  // (beta = 1). x: [n_tokens][w.cols] f32; y: [n_tokens][w.rows] f32. Asynchronous on the
  // stream; reserves what it needs first (nothing, after a large enough reserve()).
  void run(const DeviceWeight& w, const float* x, int n_tokens, float* y, bool accumulate = false);

 private:
  DeviceAllocator& alloc_;
  cudaStream_t stream_;
  std::size_t weight_scratch_bytes_;
  cublasContext* handle_ = nullptr;
  DeviceBuffer workspace_;  // cuBLAS's own scratch
  DeviceBuffer x16_;        // [n_tokens][cols] fp16 activations
  DeviceBuffer w16_;        // [slab rows][cols] fp16 weights (non-F16 types)
};

}  // namespace kvscope::cuda
