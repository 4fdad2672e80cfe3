// quant_dot_x86.h's kernels for AVX2 + FMA + F16C (this file's compile flags, set in
// engine/CMakeLists.txt); called only where cpu_supports(CpuIsa::Avx2).
#define KVSCOPE_X86_VNNI 0
#define KVSCOPE_X86_AVX1 0
#include "cpu/quant_dot/quant_dot.h"
#include "cpu/simd_dispatch.h"

#if KVSCOPE_X86_SIMD
#include "cpu/quant_dot/quant_dot_table.h"
#include "cpu/quant_dot/quant_dot_x86.h"
#endif

namespace kvscope::quant_dot_detail {

const KernelTable* avx2_kernels() {
#if KVSCOPE_X86_SIMD
  static const KernelTable table = KVSCOPE_KERNEL_TABLE;
  return &table;
#else
  return nullptr;
#endif
}

}  // namespace kvscope::quant_dot_detail
