#include "kv/format/kv_rotation.h"

#include <bit>
#include <cmath>

namespace kvscope {
namespace {

// x [n] <- H_n x / sqrt(n) for n a power of two: log2(n) stages of sums and differences of
// pairs h apart (h = 1, 2, 4, ...), each pair's a + b and a - b rounded once.
void hadamard_piece(float* x, std::int64_t n) {
  for (std::int64_t h = 1; h < n; h *= 2) {
    for (std::int64_t i = 0; i < n; i += 2 * h) {
      for (std::int64_t j = i; j < i + h; ++j) {
        const float a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
    }
  }
  const float norm = 1.0f / std::sqrt(static_cast<float>(n));
  for (std::int64_t i = 0; i < n; ++i) x[i] *= norm;
}

}  // namespace

bool kv_rotated(KvSide /*side*/, KvDtype dtype) {
  return dtype == KvDtype::Int4;
}

void kv_rotate_rows(float* x, std::int64_t n_rows, std::int64_t head_dim) {
  for (std::int64_t r = 0; r < n_rows; ++r) {
    float* row = x + r * head_dim;
    for (std::int64_t done = 0; done < head_dim;) {
      const auto piece =
          static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(head_dim - done)));
      hadamard_piece(row + done, piece);
      done += piece;
    }
  }
}

}  // namespace kvscope
