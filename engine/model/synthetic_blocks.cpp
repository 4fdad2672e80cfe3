#include "model/synthetic_blocks.h"

#include <algorithm>
#include <cstring>

#include "util/error.h"
#include "util/half.h"

namespace kvscope {

namespace {

// splitmix64: 64 random bits per call.
class Bits {
 public:
  explicit Bits(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform() {  // [-1, 1)
    return static_cast<float>(static_cast<double>(next() >> 40) / 8388608.0 - 1.0);
  }

 private:
  std::uint64_t state_;
};

void put_half(std::uint8_t* p, float v) {
  const std::uint16_t h = float_to_fp16(v);
  std::memcpy(p, &h, sizeof h);
}

// Q8_0 block: fp16 d, 32 int8 codes in [-127, 127].
void q8_0_block(std::uint8_t* p, float d, Bits& bits) {
  put_half(p, d);
  for (int i = 0; i < 32; i += 8) {
    std::uint64_t r = bits.next();
    for (int j = 0; j < 8; ++j, r >>= 8) {
      p[2 + i + j] = static_cast<std::uint8_t>(static_cast<std::int8_t>((r & 0xff) % 255 - 127));
    }
  }
}

// Q4_0 block: fp16 d, 16 bytes of two nibbles each.
void q4_0_block(std::uint8_t* p, float d, Bits& bits) {
  put_half(p, d);
  const std::uint64_t a = bits.next(), b = bits.next();
  std::memcpy(p + 2, &a, 8);
  std::memcpy(p + 10, &b, 8);
}

void random_bytes(std::uint8_t* p, std::int64_t n, Bits& bits) {
  for (std::int64_t i = 0; i < n; i += 8) {
    const std::uint64_t r = bits.next();
    std::memcpy(p + i, &r, static_cast<std::size_t>(std::min<std::int64_t>(8, n - i)));
  }
}

// Q4_K super-block (144 bytes): fp16 d, fp16 dmin, 12 bytes of 6-bit scales and mins, 128
// bytes of nibbles. All scale bytes 0xff make every sub-block's scale and min 63, so value =
// 63 d q - 63 dmin: d = 2 scale / (15 * 63), dmin = scale / 63 give 2 scale q / 15 - scale,
// uniform over [-scale, scale] as the nibbles are.
void q4_k_block(std::uint8_t* p, float scale, Bits& bits) {
  put_half(p, 2.0f * scale / (15.0f * 63.0f));
  put_half(p + 2, scale / 63.0f);
  std::memset(p + 4, 0xff, 12);
  random_bytes(p + 16, 128, bits);
}

// Q6_K super-block (210 bytes): 128 bytes ql, 64 bytes qh, 16 int8 scales, fp16 d last.
// Scales 127 and d = scale / (32 * 127): value = scale (q - 32) / 32 for the 6-bit q, in
// [-scale, scale).
void q6_k_block(std::uint8_t* p, float scale, Bits& bits) {
  random_bytes(p, 192, bits);
  std::memset(p + 192, 127, 16);
  put_half(p + 208, scale / (32.0f * 127.0f));
}

}  // namespace

std::optional<std::vector<std::uint8_t>> random_weight_blocks(TensorType type, std::int64_t rows,
                                                              std::int64_t cols, float scale,
                                                              std::uint64_t seed) {
  if (type != TensorType::F32 && type != TensorType::F16 && type != TensorType::Q8_0 &&
      type != TensorType::Q4_0 && type != TensorType::Q4_K && type != TensorType::Q6_K) {
    return std::nullopt;
  }
  const TensorTypeInfo& info = tensor_type_info(type);
  if (rows < 1 || cols < 1 || cols % info.block_elems != 0) {
    throw_error<UsageError>("random_weight_blocks: a {} x {} {} matrix (rows of whole {} blocks)",
                            rows, cols, info.name, info.block_elems);
  }
  const std::int64_t n_blocks = rows * cols / info.block_elems;
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n_blocks * info.block_bytes));
  Bits bits(seed);
  std::uint8_t* p = out.data();
  for (std::int64_t i = 0; i < n_blocks; ++i, p += info.block_bytes) {
    switch (type) {
      case TensorType::F32: {
        const float v = bits.uniform() * scale;
        std::memcpy(p, &v, sizeof v);
        break;
      }
      case TensorType::F16:
        put_half(p, bits.uniform() * scale);
        break;
      case TensorType::Q8_0:
        q8_0_block(p, scale / 127.0f, bits);
        break;
      case TensorType::Q4_K:
        q4_k_block(p, scale, bits);
        break;
      case TensorType::Q6_K:
        q6_k_block(p, scale, bits);
        break;
      default:
        q4_0_block(p, scale / 8.0f, bits);
        break;
    }
  }
  return out;
}

}  // namespace kvscope
