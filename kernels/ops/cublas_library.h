// cuBLAS, opened on first use instead of at program start. Linked normally, libcublas and
// libcublasLt (about 700 MB of shared objects) are mapped and relocated when any KVScope
// program starts, GPU or not: about 150 MB of resident memory before a CPU model is even
// opened. Loaded here, only a CUDA backend pays for it, and a machine without cuBLAS still
// runs everything else.
#pragma once

#include <cublas_v2.h>

namespace kvscope::cuda {

// cublasGemmEx with a compute type (C++ also sees an overload taking a cudaDataType).
using CublasGemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                          int m, int n, int k, const void* alpha, const void* a,
                                          cudaDataType a_type, int lda, const void* b,
                                          cudaDataType b_type, int ldb, const void* beta, void* c,
                                          cudaDataType c_type, int ldc, cublasComputeType_t,
                                          cublasGemmAlgo_t);

// The cuBLAS entry points KVScope calls (their _v2 symbols, which cublas_v2.h's macros name).
struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  CublasGemmExFn gemm_ex = nullptr;
};

// The library, loaded once (thread-safe); throws Error naming the file and the loader's
// reason when it cannot be opened or lacks an entry point.
const CublasLibrary& cublas_library();

// Whether cuBLAS has been loaded in this process (tests: nothing loads it but a backend).
bool cublas_library_loaded();

}  // namespace kvscope::cuda
