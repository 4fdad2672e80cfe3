// ops/cublas_library.h in the CUDA emulation build: the stand-in's entry points
// (emu_cublas.cpp) instead of the toolkit's libcublas, which the emulation does not open.
#include "ops/cublas_library.h"

#include <atomic>

namespace kvscope::cuda {

namespace {
std::atomic<bool> loaded{false};
}

const CublasLibrary& cublas_library() {
  static const CublasLibrary lib = [] {
    CublasLibrary l;
    l.create = &cublasCreate_v2;
    l.destroy = &cublasDestroy_v2;
    l.set_stream = &cublasSetStream_v2;
    l.set_workspace = &cublasSetWorkspace_v2;
    l.gemm_ex = &cublasGemmEx;
    loaded = true;
    return l;
  }();
  return lib;
}

bool cublas_library_loaded() {
  return loaded;
}

}  // namespace kvscope::cuda
