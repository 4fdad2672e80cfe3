// quant_dot_x86.h's kernels with AVX-512 VNNI dot products on 256-bit registers (VL), so the
// clock does not drop as it can for 512-bit ones; compile flags in engine/CMakeLists.txt.
// Called only where cpu_supports(CpuIsa::Avx512Vnni).
#define KVSCOPE_X86_VNNI 1
#define KVSCOPE_X86_AVX1 0
#include "cpu/quant_dot/quant_dot.h"
#include "cpu/simd_dispatch.h"

#if KVSCOPE_X86_SIMD
#include "cpu/quant_dot/quant_dot_table.h"
#include "cpu/quant_dot/quant_dot_x86.h"
#endif

namespace kvscope::quant_dot_detail {

const KernelTable* avx512vnni_kernels() {
#if KVSCOPE_X86_SIMD
  static const KernelTable table = KVSCOPE_KERNEL_TABLE;
  return &table;
#else
  return nullptr;
#endif
}

}  // namespace kvscope::quant_dot_detail
