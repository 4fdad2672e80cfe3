#include "cpu/quant_dot/interleaved.h"

#include <cstring>

#include "quant/quant_blocks.h"
#include "util/error.h"

namespace kvscope {

namespace {

// Bytes of one 32-value block of a group: scales, minimums, codes.
std::int64_t group_block_bytes(TensorType type) {
  switch (type) {
    case TensorType::Q4_0:
      return 16 + 128;
    case TensorType::Q4_1:
      return 32 + 128;
    case TensorType::Q5_0:
      return 16 + 32 + 128;
    case TensorType::Q5_1:
      return 32 + 32 + 128;
    case TensorType::Q8_0:
      return 16 + 256;
    case TensorType::Q4_K:
      return SuperGroupLayout::kBytes / 8;
    case TensorType::Q6_K:
      return Q6GroupLayout::kBytes / 8;
    default:
      return 0;
  }
}

// Copies block b of row r (of a group) into its places in the group's block `out`: the
// scale (and minimum), and its code bytes 4 at a time. The stored 4-bit codes already pair
// value j (low nibble) with value 16 + j (high), the layout the kernels read.
void place(TensorType type, const std::byte* src, int r, std::uint8_t* out) {
  using namespace quants;  // NOLINT(google-build-using-namespace)
  std::uint8_t* d = out + 2 * r;
  if (type == TensorType::Q8_0) {
    const auto& b = *reinterpret_cast<const BlockQ8_0*>(src);
    std::memcpy(d, b.d.bytes, 2);
    for (int g = 0; g < 8; ++g) {
      for (int k = 0; k < 4; ++k) {
        out[16 + (g * 8 + r) * 4 + k] = static_cast<std::uint8_t>(b.qs[4 * g + k] + 128);
      }
    }
    return;
  }
  const bool has_min = type == TensorType::Q4_1 || type == TensorType::Q5_1;
  const bool five = type == TensorType::Q5_0 || type == TensorType::Q5_1;
  const std::uint8_t* qs = nullptr;
  std::uint8_t* high_bits = out + (has_min ? 32 : 16);
  switch (type) {
    case TensorType::Q4_1: {
      const auto& b = *reinterpret_cast<const BlockQ4_1*>(src);
      std::memcpy(d, b.d.bytes, 2);
      std::memcpy(out + 16 + 2 * r, b.m.bytes, 2);
      qs = b.qs;
      break;
    }
    case TensorType::Q5_0: {
      const auto& b = *reinterpret_cast<const BlockQ5_0*>(src);
      std::memcpy(d, b.d.bytes, 2);
      std::memcpy(high_bits + 4 * r, b.qh, 4);
      qs = b.qs;
      break;
    }
    case TensorType::Q5_1: {
      const auto& b = *reinterpret_cast<const BlockQ5_1*>(src);
      std::memcpy(d, b.d.bytes, 2);
      std::memcpy(out + 16 + 2 * r, b.m.bytes, 2);
      std::memcpy(high_bits + 4 * r, b.qh, 4);
      qs = b.qs;
      break;
    }
    default: {
      const auto& b = *reinterpret_cast<const BlockQ4_0*>(src);
      std::memcpy(d, b.d.bytes, 2);
      qs = b.qs;
    }
  }
  std::uint8_t* codes = high_bits + (five ? 32 : 0);
  for (int g = 0; g < 4; ++g) std::memcpy(codes + (g * 8 + r) * 4, qs + 4 * g, 4);
}

// Copies the Q4_K super-block at `src` (row r of a group) into its places in the group's
// super-block `out`: d, dmin, each sub-block's scale and minimum, and its codes re-paired so
// that byte k of code group g holds values 4g + k (low nibble) and 16 + 4g + k (high), as the
// other 4-bit layouts (the file pairs value l of sub-blocks 2c and 2c + 1 instead).
void place_q4_K(const std::byte* src, int r, std::uint8_t* out) {
  using namespace quants;  // NOLINT(google-build-using-namespace)
  const auto& b = *reinterpret_cast<const BlockQ4_K*>(src);
  std::memcpy(out + 2 * r, b.d.bytes, 2);
  std::memcpy(out + 16 + 2 * r, b.dmin.bytes, 2);
  for (int j = 0; j < 8; ++j) {
    std::uint8_t* sub = out + SuperGroupLayout::kHeader + j * SuperGroupLayout::kSubBytes;
    scale_min_k4(j, b.scales, sub[r], sub[8 + r]);
    const std::uint8_t* qs = b.qs + 32 * (j / 2);
    const int shift = 4 * (j % 2);
    const auto value = [&](int l) { return static_cast<std::uint8_t>((qs[l] >> shift) & 0xF); };
    for (int g = 0; g < 4; ++g) {
      for (int k = 0; k < 4; ++k) {
        sub[16 + (g * 8 + r) * 4 + k] =
            static_cast<std::uint8_t>(value(4 * g + k) | (value(16 + 4 * g + k) << 4));
      }
    }
  }
}

// Copies the Q6_K super-block at `src` (row r of a group) into its places in the group's
// super-block `out` (interleaved.h): d, each sub-block's two scales, low 4 bits re-paired as
// the 4-bit layouts (value 4g + k low, 16 + 4g + k high), high 2 bits four to a byte.
void place_q6_K(const std::byte* src, int r, std::uint8_t* out) {
  using namespace quants;  // NOLINT(google-build-using-namespace)
  const auto& b = *reinterpret_cast<const BlockQ6_K*>(src);
  std::memcpy(out + 2 * r, b.d.bytes, 2);
  for (int j = 0; j < 8; ++j) {
    std::uint8_t* sub = out + Q6GroupLayout::kHeader + j * Q6GroupLayout::kSubBytes;
    sub[r] = static_cast<std::uint8_t>(b.scales[2 * j]);
    sub[8 + r] = static_cast<std::uint8_t>(b.scales[2 * j + 1]);
    // value l of sub-block j, as the row kernels' Q6_K decode reads it: 6 bits, 0..63
    const int h = j / 4, part = j % 4;
    const std::uint8_t* ql = b.ql + 64 * h + 32 * (part % 2);
    const std::uint8_t* qh = b.qh + 32 * h;
    const auto code = [&](int l) {
      const int lo = part < 2 ? (ql[l] & 0xF) : (ql[l] >> 4);
      return lo | (((qh[l] >> (2 * part)) & 3) << 4);
    };
    std::uint8_t* low4 = sub + 16;
    std::uint8_t* high2 = sub + 16 + 128;
    for (int g = 0; g < 4; ++g) {
      for (int k = 0; k < 4; ++k) {
        const int a = code(4 * g + k), c = code(16 + 4 * g + k);
        low4[(g * 8 + r) * 4 + k] = static_cast<std::uint8_t>((a & 0xF) | ((c & 0xF) << 4));
        // pair g / 2, nibble g % 2: (high bits of value 4g + k, of 16 + 4g + k)
        const int bits = (a >> 4) | ((c >> 4) << 2);
        high2[(g / 2 * 8 + r) * 4 + k] |= static_cast<std::uint8_t>(bits << (4 * (g % 2)));
      }
    }
  }
}

}  // namespace

bool can_interleave(TensorType type) {
  return group_block_bytes(type) > 0;
}

InterleavedMatrix::InterleavedMatrix(const WeightView& w)
    : type_(w.type), rows_(w.rows), cols_(w.cols), block_bytes_(group_block_bytes(w.type)) {
  if (!can_interleave(w.type) || w.cols % tensor_type_info(w.type).block_elems != 0 || !w.data) {
    throw_error<UsageError>("interleave: tensor {} ({} x {} {}) has no interleaved layout", w.name,
                            w.rows, w.cols, tensor_type_name(w.type));
  }
  const std::int64_t n_blocks = cols_ / 32;
  const std::int64_t src_block = tensor_type_info(type_).block_bytes;
  bytes_.assign(static_cast<std::size_t>(n_groups() * group_bytes()), 0);  // padding rows: 0
  for (std::int64_t row = 0; row < rows_; ++row) {
    const auto* src = static_cast<const std::byte*>(w.row(row));
    std::uint8_t* group = bytes_.data() + (row / kInterleavedRows) * group_bytes();
    const int r = static_cast<int>(row % kInterleavedRows);
    if (type_ == TensorType::Q4_K || type_ == TensorType::Q6_K) {
      const bool q6 = type_ == TensorType::Q6_K;
      const std::int64_t bytes = q6 ? Q6GroupLayout::kBytes : SuperGroupLayout::kBytes;
      for (std::int64_t b = 0; b < n_blocks / 8; ++b) {
        (q6 ? place_q6_K : place_q4_K)(src + b * src_block, r, group + b * bytes);
      }
      continue;
    }
    for (std::int64_t b = 0; b < n_blocks; ++b) {
      place(type_, src + b * src_block, r, group + b * block_bytes_);
    }
  }
}

InterleavedDotFn interleaved_dot_fn(TensorType type, CpuIsa isa) {
  const quant_dot_detail::KernelTable* table = quant_dot_detail::kernel_table(isa);
  if (table == nullptr) return nullptr;
  switch (type) {
    case TensorType::Q4_0:
      return table->interleaved_q4_0;
    case TensorType::Q4_1:
      return table->interleaved_q4_1;
    case TensorType::Q5_0:
      return table->interleaved_q5_0;
    case TensorType::Q5_1:
      return table->interleaved_q5_1;
    case TensorType::Q8_0:
      return table->interleaved_q8_0;
    case TensorType::Q4_K:
      return table->interleaved_q4_K;
    case TensorType::Q6_K:
      return table->interleaved_q6_K;
    default:
      return nullptr;
  }
}

}  // namespace kvscope
