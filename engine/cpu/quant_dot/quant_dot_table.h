// Builds a quant_dot_detail::KernelTable from what every kernel file defines in its own
// anonymous namespace: the format structs Q4_0 .. Q6_K, F16, BF16, and
//   BlockKernel<Format, R, NT>::run        (quantized formats, per 32-value block)
//   HalfKernel<Format, R, NT>::run         (F16 / BF16)
//   InterleavedKernel<Format, NT>::run     (8-row groups of Q4_0, Q4_1, Q8_0: interleaved.h)
// each computing an R-row x NT-token tile. run_tile picks the instantiated shape for a call:
// one token, 1 to 4 rows (decode: four rows share each activation block), or 2 to 4 tokens on
// pairs of rows (prompts: each decoded weight block serves every token of the tile).
// Only the kernel files (quant_dot_portable.cpp, quant_dot_avx2.cpp, quant_dot_avx512.cpp)
// include this.
#pragma once

#include <cstddef>

#include "cpu/quant_dot/quant_dot.h"

namespace kvscope::quant_dot_detail {

template <template <int, int> class K>
void run_tile(const void* rows, std::int64_t row_stride, int n_rows, std::int64_t n, EncodedRows x,
              int n_tokens, float* out, std::int64_t out_stride) {
  const auto* base = static_cast<const std::byte*>(rows);
  if (n_tokens == 1) {
    switch (n_rows) {
      case 1:
        return K<1, 1>::run(base, row_stride, n, x, out, out_stride);
      case 2:
        return K<2, 1>::run(base, row_stride, n, x, out, out_stride);
      case 3:
        return K<3, 1>::run(base, row_stride, n, x, out, out_stride);
      default:
        return K<4, 1>::run(base, row_stride, n, x, out, out_stride);
    }
  }
  for (int r = 0; r < n_rows; r += 2) {
    const std::byte* row = base + r * row_stride;
    float* o = out + r;
    const bool pair = r + 1 < n_rows;
    switch (n_tokens) {
      case 2:
        pair ? K<2, 2>::run(row, row_stride, n, x, o, out_stride)
             : K<1, 2>::run(row, row_stride, n, x, o, out_stride);
        break;
      case 3:
        pair ? K<2, 3>::run(row, row_stride, n, x, o, out_stride)
             : K<1, 3>::run(row, row_stride, n, x, o, out_stride);
        break;
      default:
        pair ? K<2, 4>::run(row, row_stride, n, x, o, out_stride)
             : K<1, 4>::run(row, row_stride, n, x, o, out_stride);
    }
  }
}

// Calls K<NT>::run for the tile's token count.
template <template <int> class K>
void run_group(const std::uint8_t* group, std::int64_t n_blocks, EncodedRows x, int n_tokens,
               float* out, std::int64_t out_stride) {
  switch (n_tokens) {
    case 1:
      return K<1>::run(group, n_blocks, x, out, out_stride);
    case 2:
      return K<2>::run(group, n_blocks, x, out, out_stride);
    case 3:
      return K<3>::run(group, n_blocks, x, out, out_stride);
    default:
      return K<4>::run(group, n_blocks, x, out, out_stride);
  }
}

}  // namespace kvscope::quant_dot_detail

// The kernel of format F as a template over the tile shape, for run_tile.
#define KVSCOPE_TILE_FN(Kernel, F) &run_tile<TileShape<Kernel, F>::template Of>

#define KVSCOPE_KERNEL_TABLE                                                    \
  KernelTable {                                                                 \
    KVSCOPE_TILE_FN(BlockKernel, Q4_0), KVSCOPE_TILE_FN(BlockKernel, Q4_1),     \
        KVSCOPE_TILE_FN(BlockKernel, Q5_0), KVSCOPE_TILE_FN(BlockKernel, Q5_1), \
        KVSCOPE_TILE_FN(BlockKernel, Q8_0), KVSCOPE_TILE_FN(BlockKernel, Q4_K), \
        KVSCOPE_TILE_FN(BlockKernel, Q5_K), KVSCOPE_TILE_FN(BlockKernel, Q6_K), \
        KVSCOPE_TILE_FN(HalfKernel, F16), KVSCOPE_TILE_FN(HalfKernel, BF16),    \
        &run_group<GroupShape<InterleavedKernel, Q4_0>::template Of>,           \
        &run_group<GroupShape<InterleavedKernel, Q4_1>::template Of>,           \
        &run_group<GroupShape<InterleavedKernel, Q8_0>::template Of>            \
  }

namespace kvscope::quant_dot_detail {
// Binds the interleaved kernel to a format, leaving the token count open (for run_group).
template <template <class, int> class Kernel, class F>
struct GroupShape {
  template <int NT>
  using Of = Kernel<F, NT>;
};
// Binds a kernel template to a format, leaving the tile shape open (for run_tile).
template <template <class, int, int> class Kernel, class F>
struct TileShape {
  template <int R, int NT>
  using Of = Kernel<F, R, NT>;
};
}  // namespace kvscope::quant_dot_detail
