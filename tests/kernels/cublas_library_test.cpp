// cuBLAS is opened by the first CUDA backend, not when a program starts: linked, it cost
// every KVScope program about 150 MB of resident memory before any model was open.
#include "ops/cublas_library.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "util/error.h"

namespace kvscope::cuda {
namespace {

bool cublas_is_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("libcublas") != std::string::npos) return true;
  }
  return false;
}

TEST(CublasLibrary, IsNotInTheProcessUntilABackendAsksForIt) {
  if (cublas_library_loaded()) GTEST_SKIP() << "an earlier test in this process built a backend";
  EXPECT_FALSE(cublas_is_mapped());
}

TEST(CublasLibrary, OpensWithEveryEntryPointOrSaysWhichFileIsMissing) {
  try {
    const CublasLibrary& lib = cublas_library();
    EXPECT_TRUE(lib.create && lib.destroy && lib.set_stream && lib.set_workspace && lib.gemm_ex);
    EXPECT_TRUE(cublas_library_loaded());
#if defined(KVSCOPE_CUDA_EMULATION)
    EXPECT_FALSE(cublas_is_mapped()) << "the emulation answers the cuBLAS calls itself";
#else
    EXPECT_TRUE(cublas_is_mapped());
#endif
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("libcublas.so"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvscope::cuda
