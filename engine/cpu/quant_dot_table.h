// Builds a quant_dot_detail::KernelTable from the function templates every kernel file
// defines (q4_0_t<NT> .. bf16_t<NT>, NT = 1 .. kMaxTileTokens): one function pointer per
// type that picks the instantiation for the tile's token count. Only the kernel files
// (quant_dot_portable.cpp, quant_dot_avx2.cpp, quant_dot_avx512.cpp) include this.
#pragma once

#include "cpu/quant_dot.h"

#define KVSCOPE_TILE_FN(name)                                                               \
  [](const void* row, std::int64_t n, EncodedRows x, int nt, float* out, std::int64_t os) { \
    switch (nt) {                                                                           \
      case 1:                                                                               \
        return name<1>(row, n, x, out, os);                                                 \
      case 2:                                                                               \
        return name<2>(row, n, x, out, os);                                                 \
      case 3:                                                                               \
        return name<3>(row, n, x, out, os);                                                 \
      default:                                                                              \
        return name<4>(row, n, x, out, os);                                                 \
    }                                                                                       \
  }

#define KVSCOPE_KERNEL_TABLE                                                       \
  KernelTable {                                                                    \
    KVSCOPE_TILE_FN(q4_0_t), KVSCOPE_TILE_FN(q4_1_t), KVSCOPE_TILE_FN(q5_0_t),     \
        KVSCOPE_TILE_FN(q5_1_t), KVSCOPE_TILE_FN(q8_0_t), KVSCOPE_TILE_FN(q4_K_t), \
        KVSCOPE_TILE_FN(q5_K_t), KVSCOPE_TILE_FN(q6_K_t), KVSCOPE_TILE_FN(f16_t),  \
        KVSCOPE_TILE_FN(bf16_t)                                                    \
  }
