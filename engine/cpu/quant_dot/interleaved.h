// Weight matrices re-laid for the CPU's dot products, as llama.cpp repacks Q4_0 on x86: rows
// in groups of 8, each 32-value block of the 8 rows stored together so one 256-bit load
// holds 4 codes of every row, and a dot product instruction (vpdpbusd, or maddubs + madd)
// against 4 activation bytes broadcast to all lanes adds into 8 per-row sums at once. The 8
// rows' scales (and minimums) are one 128-bit load of fp16, converted in one instruction.
// Against one row at a time this takes about a third of the instructions per weight.
//
// Group layout, per 32-value block (G = 8 rows):
//   d[G]    fp16 scales
//   m[G]    fp16 minimums (Q4_1 and Q5_1 only; Q4_0's -8 d and Q5_0's -16 d are derived)
//   qh[G]   Q5_0 / Q5_1 only: each row's 32 fifth bits (bit j: value j), 4 bytes per row
//   codes   4-bit formats: [4 groups g][G rows][4 bytes]: byte k of row r holds value 4g + k
//           in its low nibble and value 16 + 4g + k in its high one (unsigned, 0..15)
//           Q8_0:          [8 groups g][G rows][4 bytes]: value 4g + k, plus 128 (unsigned,
//                          so VNNI's unsigned x signed product takes it as it is; the kernel
//                          subtracts 128 * the activation codes' sum, exactly)
// A last group of fewer than 8 rows is padded with zero blocks.
//
// Q4_K (super-blocks of 256 values in 8 sub-blocks of 32, each with a 6-bit scale and minimum)
// keeps its super-block's fp16 d and dmin, and each sub-block's 6-bit numbers as bytes, so
// the kernels form exactly the row kernels' d * sc and -(dmin * m) (both exact in float):
//   per super-block:  d[G] fp16, dmin[G] fp16                          (32 bytes)
//   per sub-block j:  sc[G] u8, m[G] u8, codes as the 4-bit formats'   (16 + 128 bytes)
// 1184 bytes per 8 rows x 256 values, 3% more than the 8 rows' 1152 in the file.
//
// Q6_K (6-bit codes u, value u - 32, an int8 scale per 16 values): the low 4 bits of the codes
// as the 4-bit layouts (so a byte's low nibble is in the sub-block's first half, its high one
// in the second, each half with its own scale), the high 2 bits beside them:
//   per super-block:  d[G] fp16                                         (16 bytes)
//   per sub-block j:  sc[2][G] int8 (first half, second half), low4 codes [4][G][4],
//                     high2 [2 pairs p][G][4]: byte k of row r holds the high bits of
//                     values 8p + k, 16 + 8p + k, 8p + 4 + k, 20 + 8p + k (2 bits each, from
//                     bit 0 up)                                         (16 + 128 + 64 bytes)
// 1680 bytes per 8 rows x 256 values, the same as the file's.
//
// Results: row r = sum over blocks of fma(float(P_r), d_r * d_x, acc_r), plus (Q4_1) the
// minimums' sum fma(min_r, s_x, off_r), then acc_r + off_r; P_r is the exact integer dot
// product of the signed codes (Q4_0: u - 8, Q5_0: u - 16, Q8_0: u - 128) with the
// activation codes. The
// portable and SIMD kernels give the same bits; the sums are in another order than the
// row-at-a-time kernels', so results differ from those by float rounding.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/quant_dot/quant_dot.h"
#include "model/model.h"

namespace kvscope {

inline constexpr int kInterleavedRows = 8;

// One 32-value block of a group: scales (and minimums, and fifth bits), then the codes.
template <bool kEightBit, bool kHasMin, bool kFifthBit = false>
struct GroupBlock {
  static constexpr int kHighBitsOffset = kHasMin ? 32 : 16;
  static constexpr int kCodeOffset = kHighBitsOffset + (kFifthBit ? 32 : 0);
  static constexpr int kBytes = kCodeOffset + (kEightBit ? 256 : 128);
};

// Q4_K's group layout, per super-block of 256 values.
struct SuperGroupLayout {
  static constexpr int kHeader = 32;          // d[8], dmin[8]
  static constexpr int kSubBytes = 16 + 128;  // sc[8], m[8], codes
  static constexpr int kBytes = kHeader + 8 * kSubBytes;
};

// Q6_K's group layout, per super-block of 256 values.
struct Q6GroupLayout {
  static constexpr int kHeader = 16;               // d[8]
  static constexpr int kSubBytes = 16 + 128 + 64;  // sc, low4, high2
  static constexpr int kBytes = kHeader + 8 * kSubBytes;
};

// Whether `type` has an interleaved layout (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K); a matrix of it
// also needs whole blocks of the type per row (32 values, 256 for Q4_K).
bool can_interleave(TensorType type);

class InterleavedMatrix {
 public:
  // Re-lays `w` (which must be of a type can_interleave accepts, cols a multiple of its
  // block: 32, or 256 for Q4_K).
  explicit InterleavedMatrix(const WeightView& w);

  TensorType type() const { return type_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t n_groups() const { return (rows_ + kInterleavedRows - 1) / kInterleavedRows; }
  // Bytes of one 32-value block of one group (Q4_K: a super-block's share, 1184 / 8), and
  // of a whole group of rows.
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
