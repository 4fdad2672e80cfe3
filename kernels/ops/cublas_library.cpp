#include "ops/cublas_library.h"

#include <dlfcn.h>

#include <atomic>
#include <string>

#include "util/error.h"

namespace kvscope::cuda {

namespace {

std::atomic<bool> loaded{false};

// The soname of the toolkit KVScope was built with (libcublas.so.13 for CUDA 13) where the
// loader finds it, then in the toolkit's own library folder (what the linked build's rpath
// pointed at), then the unversioned name a development install provides.
void* open_cublas(std::string& tried) {
  const std::string versioned = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  for (const std::string& name : {versioned, std::string(KVSCOPE_CUDA_LIBRARY_DIR "/") + versioned,
                                  std::string("libcublas.so")}) {
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + name + ": " + (why ? why : "not found");
  }
  return nullptr;
}

template <class Fn>
void resolve(void* handle, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (!fn)
    throw_error<Error>("cuBLAS has no entry point {}: the library is older than CUDA {}", symbol,
                       CUBLAS_VER_MAJOR);
}

CublasLibrary load() {
  std::string tried;
  void* handle = open_cublas(tried);
  if (!handle) {
    throw_error<Error>(
        "cuBLAS could not be loaded ({}); the CUDA backend needs the CUDA {} "
        "cuBLAS library on the loader's path",
        tried, CUBLAS_VER_MAJOR);
  }
  CublasLibrary lib;
  resolve(handle, "cublasCreate_v2", lib.create);
  resolve(handle, "cublasDestroy_v2", lib.destroy);
  resolve(handle, "cublasSetStream_v2", lib.set_stream);
  resolve(handle, "cublasSetWorkspace_v2", lib.set_workspace);
  resolve(handle, "cublasGemmEx", lib.gemm_ex);
  loaded = true;
  return lib;  // the handle stays open for the process's life
}

}  // namespace

const CublasLibrary& cublas_library() {
  static const CublasLibrary lib = load();
  return lib;
}

bool cublas_library_loaded() {
  return loaded;
}

}  // namespace kvscope::cuda
