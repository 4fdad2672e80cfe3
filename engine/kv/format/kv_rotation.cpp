#include "kv/format/kv_rotation.h"

#include <bit>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kvscope {
namespace {

// x [n] <- H_n x / sqrt(n) for n a power of two: log2(n) stages of sums and differences of
// pairs h apart (h = 1, 2, 4, ...), each pair's a + b and a - b rounded once.
void hadamard_piece_scalar(float* x, std::int64_t n) {
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

#if defined(__SSE2__)
// Stages h = 1 and 2 of an aligned group of four, the only pairs inside it:
//   h = 1: (a0 + a1, a0 - a1, a2 + a3, a2 - a3), from v and v with neighbours swapped
//   h = 2: (b0 + b2, b1 + b3, b0 - b2, b1 - b3), from v and v with halves swapped
__m128 hadamard_four(__m128 v) {
  __m128 s = _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1));  // a1 a0 a3 a2
  __m128 sum = _mm_add_ps(v, s), diff = _mm_sub_ps(s, v);    // lanes 1, 3 of diff: a0-a1, a2-a3
  v = _mm_shuffle_ps(sum, diff, _MM_SHUFFLE(3, 1, 2, 0));    // sum0 sum2 diff1 diff3
  v = _mm_shuffle_ps(v, v, _MM_SHUFFLE(3, 1, 2, 0));         // sum0 diff1 sum2 diff3
  s = _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2));         // b2 b3 b0 b1
  sum = _mm_add_ps(v, s);
  diff = _mm_sub_ps(s, v);  // lanes 2, 3: b0-b2, b1-b3
  return _mm_shuffle_ps(sum, diff, _MM_SHUFFLE(3, 2, 1, 0));
}

// Stage kH (in vectors: pairs kH x 4 values apart) and the ones after it, on v.
template <int kVecs, int kH>
void hadamard_stages(__m128 (&v)[kVecs]) {
  for (int i = 0; i < kVecs; i += 2 * kH) {
    for (int j = i; j < i + kH; ++j) {
      const __m128 a = v[j], b = v[j + kH];
      v[j] = _mm_add_ps(a, b);
      v[j + kH] = _mm_sub_ps(a, b);
    }
  }
  if constexpr (2 * kH < kVecs) hadamard_stages<kVecs, 2 * kH>(v);
}

// The same stages for a piece of kN values held in registers from load to store: with the
// size known, every loop unrolls and no stage goes back to memory (at a run-time size the
// loop bookkeeping cost three times the arithmetic, callgrind on SmolLM2's 64-value rows).
template <int kN>
void hadamard_piece_fixed(float* x) {
  constexpr int kVecs = kN / 4;
  __m128 v[kVecs];
  for (int i = 0; i < kVecs; ++i) v[i] = hadamard_four(_mm_loadu_ps(x + 4 * i));
  hadamard_stages<kVecs, 1>(v);
  const __m128 norm = _mm_set1_ps(1.0f / std::sqrt(static_cast<float>(kN)));
  for (int i = 0; i < kVecs; ++i) _mm_storeu_ps(x + 4 * i, _mm_mul_ps(v[i], norm));
}

// The same butterflies four lanes at a time (SSE2 is in every x86-64 CPU): stages 1 and 2
// group by group first, then the rest; a stage depends only on the one before it, and every
// output is the same single a + b or a - b of the same two inputs, so the bits are
// hadamard_piece_scalar's. n >= 4.
void hadamard_piece_sse2(float* x, std::int64_t n) {
  if (n == 64) return hadamard_piece_fixed<64>(x);
  if (n == 128) return hadamard_piece_fixed<128>(x);
  for (std::int64_t i = 0; i < n; i += 4) _mm_storeu_ps(x + i, hadamard_four(_mm_loadu_ps(x + i)));
  for (std::int64_t h = 4; h < n; h *= 2) {
    for (std::int64_t i = 0; i < n; i += 2 * h) {
      for (std::int64_t j = i; j < i + h; j += 4) {
        const __m128 a = _mm_loadu_ps(x + j), b = _mm_loadu_ps(x + j + h);
        _mm_storeu_ps(x + j, _mm_add_ps(a, b));
        _mm_storeu_ps(x + j + h, _mm_sub_ps(a, b));
      }
    }
  }
  const __m128 norm = _mm_set1_ps(1.0f / std::sqrt(static_cast<float>(n)));
  for (std::int64_t i = 0; i < n; i += 4)
    _mm_storeu_ps(x + i, _mm_mul_ps(_mm_loadu_ps(x + i), norm));
}
#endif

void hadamard_piece(float* x, std::int64_t n) {
#if defined(__SSE2__)
  // a 64-point row took ~3,300 instructions in the scalar loops (callgrind), and an int4
  // layer turns 24 rows per token on SmolLM2 (q, k, v and the output)
  if (n >= 4) return hadamard_piece_sse2(x, n);
#endif
  hadamard_piece_scalar(x, n);
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
