// Weight matrices re-laid for the CPU's dot products, as llama.cpp repacks Q4_0 on x86: rows
// in groups of 8, each 32-value block of the 8 rows stored together so one 256-bit load
// holds 4 codes of every row, and a dot product instruction (vpdpbusd, or maddubs + madd)
// against 4 activation bytes broadcast to all lanes adds into 8 per-row sums at once. The 8
// rows' scales (and minimums) are one 128-bit load of fp16, converted in one instruction.
// Against one row at a time this takes about a third of the instructions per weight.
//
// Group layout, per 32-value block (G = 8 rows):
//   d[G]    fp16 scales
//   m[G]    fp16 minimums (Q4_1 only; Q4_0's -8 d is derived)
//   codes   4-bit formats: [4 groups g][G rows][4 bytes]: byte k of row r holds value 4g + k
//           in its low nibble and value 16 + 4g + k in its high one (unsigned, 0..15)
//           Q8_0:          [8 groups g][G rows][4 bytes]: value 4g + k, plus 128 (unsigned,
//                          so VNNI's unsigned x signed product takes it as it is; the kernel
//                          subtracts 128 * the activation codes' sum, exactly)
// A last group of fewer than 8 rows is padded with zero blocks.
//
// Results: row r = sum over blocks of fma(float(P_r), d_r * d_x, acc_r), plus (Q4_1) the
// minimums' sum fma(min_r, s_x, off_r), then acc_r + off_r; P_r is the exact integer dot
// product of the signed codes (Q4_0: u - 8, Q8_0: u - 128) with the activation codes. The
// portable and SIMD kernels give the same bits; the sums are in another order than the
// row-at-a-time kernels', so results differ from those by float rounding.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/quant_dot/quant_dot.h"
#include "model/model.h"

namespace kvscope {

inline constexpr int kInterleavedRows = 8;

// One 32-value block of a group: scales (and minimums), then the codes.
template <bool kEightBit, bool kHasMin>
struct GroupBlock {
  static constexpr int kCodeOffset = kHasMin ? 32 : 16;
  static constexpr int kBytes = kCodeOffset + (kEightBit ? 256 : 128);
};

// Whether `type` has an interleaved layout (Q4_0, Q4_1, Q8_0).
bool can_interleave(TensorType type);

class InterleavedMatrix {
 public:
  // Re-lays `w` (which must be of a type can_interleave accepts, cols a multiple of 32).
  explicit InterleavedMatrix(const WeightView& w);

  TensorType type() const { return type_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t n_groups() const { return (rows_ + kInterleavedRows - 1) / kInterleavedRows; }
  // Bytes of one block of one group, and of a whole group of rows.
  std::int64_t block_bytes() const { return block_bytes_; }
  std::int64_t group_bytes() const { return block_bytes_ * (cols_ / 32); }
  const std::uint8_t* group(std::int64_t g) const { return bytes_.data() + g * group_bytes(); }
  std::uint64_t bytes() const { return bytes_.size(); }

 private:
  TensorType type_;
  std::int64_t rows_, cols_, block_bytes_;
  std::vector<std::uint8_t> bytes_;  // [n_groups][cols / 32][block_bytes]
};

// The kernel for an interleaved matrix of `type` on `isa`; nullptr when there is none.
InterleavedDotFn interleaved_dot_fn(TensorType type, CpuIsa isa);

}  // namespace kvscope
