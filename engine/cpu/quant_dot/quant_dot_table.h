// Builds a quant_dot_detail::KernelTable from what every kernel file defines in its own
// anonymous namespace: the format structs Q4_0 .. Q6_K, F16, BF16, and
//   BlockKernel<Format, NT>::run        (one row, quantized formats, per 32-value block)
//   HalfKernel<Format, NT>::run         (one row, F16 / BF16)
//   InterleavedKernel<Format, NT>::run  (one 8-row group: interleaved.h)
// each against NT tokens (each decoded weight block serves every token of the tile). Rows
// are taken one after the other, each read in order (the hardware prefetcher's stream).
// Only the kernel files (quant_dot_portable.cpp, quant_dot_avx2.cpp, quant_dot_avx512.cpp)
// include this.
#pragma once

#include <cstddef>

#include "cpu/quant_dot/quant_dot.h"

namespace kvscope::quant_dot_detail {
// Everything here has internal linkage, like the kernels it wraps. Declared in a named
// namespace, run_tile<Bind<BlockKernel, Q4_0>::Of> was a weak symbol of the same name in
// every kernel file (GCC does not carry the alias's internal linkage into the mangled
// name), so the linker kept one copy for all three tables: every ISA ran the same code (on
// a CPU without that code's instruction set, an illegal instruction), and the tests that
// compare the tables compared that code with itself. QuantDot.EachInstructionSetHasItsOwnKernels
// guards it.
namespace {

// Calls K<NT>::run(args...) for the tile's token count.
template <template <int> class K, typename... Args>
void for_tokens(int n_tokens, Args... args) {
  switch (n_tokens) {
    case 1:
      return K<1>::run(args...);
    case 2:
      return K<2>::run(args...);
    case 3:
      return K<3>::run(args...);
    default:
      return K<4>::run(args...);
  }
}

// A TileDotFn over a one-row kernel: the tile's rows one after the other.
template <template <int> class K>
void run_tile(const void* rows, std::int64_t row_stride, int n_rows, std::int64_t n, EncodedRows x,
              int n_tokens, float* out, std::int64_t out_stride) {
  const auto* base = static_cast<const std::byte*>(rows);
  for (int r = 0; r < n_rows; ++r) {
    for_tokens<K>(n_tokens, base + r * row_stride, n, x, out + r, out_stride);
  }
}

// An InterleavedDotFn over a group kernel.
template <template <int> class K>
void run_group(const std::uint8_t* group, std::int64_t n_blocks, EncodedRows x, int n_tokens,
               float* out, std::int64_t out_stride) {
  for_tokens<K>(n_tokens, group, n_blocks, x, out, out_stride);
}

// Binds a kernel template to a format, leaving the token count open.
template <template <class, int> class Kernel, class F>
struct Bind {
  template <int NT>
  using Of = Kernel<F, NT>;
};

}  // namespace
}  // namespace kvscope::quant_dot_detail

#define KVSCOPE_TILE_FN(Kernel, F) &run_tile<Bind<Kernel, F>::template Of>
#define KVSCOPE_GROUP_FN(F) &run_group<Bind<InterleavedKernel, F>::template Of>

#define KVSCOPE_KERNEL_TABLE                                                    \
  KernelTable {                                                                 \
    KVSCOPE_TILE_FN(BlockKernel, Q4_0), KVSCOPE_TILE_FN(BlockKernel, Q4_1),     \
        KVSCOPE_TILE_FN(BlockKernel, Q5_0), KVSCOPE_TILE_FN(BlockKernel, Q5_1), \
        KVSCOPE_TILE_FN(BlockKernel, Q8_0), KVSCOPE_TILE_FN(BlockKernel, Q4_K), \
        KVSCOPE_TILE_FN(BlockKernel, Q5_K), KVSCOPE_TILE_FN(BlockKernel, Q6_K), \
        KVSCOPE_TILE_FN(HalfKernel, F16), KVSCOPE_TILE_FN(HalfKernel, BF16),    \
        KVSCOPE_GROUP_FN(Q4_0), KVSCOPE_GROUP_FN(Q4_1), KVSCOPE_GROUP_FN(Q5_0), \
        KVSCOPE_GROUP_FN(Q5_1), KVSCOPE_GROUP_FN(Q8_0), KVSCOPE_GROUP_FN(Q4_K), \
        KVSCOPE_GROUP_FN(Q6_K)                                                  \
  }
