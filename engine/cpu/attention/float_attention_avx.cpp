// float_attention_x86.h for AVX alone (no FMA, no F16C); compile flags in engine/CMakeLists.txt.
#define KVSCOPE_X86_VNNI 0
#define KVSCOPE_X86_AVX1 1
#include "cpu/attention/float_attention_simd.h"
#include "cpu/simd_dispatch.h"

#if KVSCOPE_X86_SIMD
#include "cpu/attention/float_attention_x86.h"
#endif

namespace kvscope::float_attention_detail {

const SimdTable* avx_table() {
#if KVSCOPE_X86_SIMD
  return &kTable;
#else
  return nullptr;
#endif
}

}  // namespace kvscope::float_attention_detail
