// quant_dot_x86.h's kernels for CPUs with AVX but not AVX2 (Sandy Bridge, Ivy Bridge, and
// virtual machines that hide AVX2): 256-bit floats, integers in two SSSE3 / SSE4.1 halves, a
// multiply and an add where the others fuse them, fp16 converted without F16C. Compile flags
// in engine/CMakeLists.txt; called only where cpu_supports(CpuIsa::Avx).
#define KVSCOPE_X86_VNNI 0
#define KVSCOPE_X86_AVX1 1
#include "cpu/quant_dot/quant_dot.h"
#include "cpu/simd_dispatch.h"

#if KVSCOPE_X86_SIMD
#include "cpu/quant_dot/quant_dot_table.h"
#include "cpu/quant_dot/quant_dot_x86.h"
#endif

namespace kvscope::quant_dot_detail {

const KernelTable* avx_kernels() {
#if KVSCOPE_X86_SIMD
  static const KernelTable table = KVSCOPE_KERNEL_TABLE;
  return &table;
#else
  return nullptr;
#endif
}

}  // namespace kvscope::quant_dot_detail
