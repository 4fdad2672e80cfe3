#include "cpu/matmul.h"

#include <algorithm>

#include "cpu/cpu_ops.h"
#include "cpu/thread_pool.h"
#include "util/env.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {

namespace {

// A chunk of rows should carry at least this many multiply-adds, so the cost of handing it to
// a thread stays small beside its work (as in cpu_ops.cpp's matvec).
constexpr std::int64_t kMinMacsPerChunk = 32 * 1024;

template <typename T>
void grow(std::vector<T>& v, std::int64_t n) {
  if (static_cast<std::int64_t>(v.size()) < n) v.resize(static_cast<std::size_t>(n));
}

}  // namespace

Matmul::Matmul(bool quantized_activations)
    : quantized_(quantized_activations && !env_turns_off("KVSCOPE_Q8_ACTIVATIONS")),
      isa_(best_cpu_isa()) {}

void Matmul::set_input(std::span<const float> x, std::int64_t cols) {
  if (cols <= 0 || static_cast<std::int64_t>(x.size()) % cols != 0) {
    throw_error<UsageError>("matmul: {} floats are not rows of {}", x.size(), cols);
  }
  x_ = x;
  cols_ = cols;
  n_tokens_ = static_cast<std::int64_t>(x.size()) / cols;
  have_q8_ = have_f16_ = have_bf16_ = false;
}

// The input encoded for `kind`, made on first use (tokens split over the pool).
EncodedRows Matmul::encoded(ThreadPool& pool, ActivationKind kind) {
  const std::int64_t cols = cols_;
  const float* x = x_.data();
  if (kind == ActivationKind::Q8) {
    const std::int64_t blocks = cols / kQ8BlockValues;
    if (!have_q8_) {
      grow(q8_, n_tokens_ * blocks);
      Q8Block* out = q8_.data();
      pool.parallel_for(n_tokens_, [=](std::int64_t begin, std::int64_t end) {
        for (std::int64_t t = begin; t < end; ++t) {
          quantize_row_q8({x + t * cols, static_cast<std::size_t>(cols)},
                          {out + t * blocks, static_cast<std::size_t>(blocks)});
        }
      });
      have_q8_ = true;
    }
    return {q8_.data(), blocks};
  }
  const bool bf16 = kind == ActivationKind::BF16;
  std::vector<std::uint16_t>& buf = bf16 ? bf16_ : f16_;
  bool& have = bf16 ? have_bf16_ : have_f16_;
  if (!have) {
    grow(buf, n_tokens_ * cols);
    for (std::int64_t i = 0; i < n_tokens_ * cols; ++i) {
      buf[static_cast<std::size_t>(i)] = bf16 ? float_to_bf16(x[i]) : float_to_fp16(x[i]);
    }
    have = true;
  }
  return {buf.data(), cols};
}

void Matmul::project(ThreadPool& pool, const WeightView& w, std::span<float> y,
                     std::span<const std::uint8_t> sgemm, const InterleavedMatrix* grouped) {
  project_planes(pool, w, y, sgemm, grouped, false);
}

void Matmul::project_two_planes(ThreadPool& pool, const WeightView& w, std::span<float> y,
                                std::span<const std::uint8_t> sgemm,
                                const InterleavedMatrix* grouped) {
  project_planes(pool, w, y, sgemm, grouped, true);
}

void Matmul::project_planes(ThreadPool& pool, const WeightView& w, std::span<float> y,
                            std::span<const std::uint8_t> sgemm, const InterleavedMatrix* grouped,
                            bool two_planes) {
  if (w.cols != cols_) {
    throw_error<UsageError>("matmul: tensor {} takes {} inputs, the input rows have {}", w.name,
                            w.cols, cols_);
  }
  if (grouped && quantized_ && static_cast<std::int64_t>(y.size()) == w.rows * n_tokens_) {
    const EncodedRows x = encoded(pool, ActivationKind::Q8);
    project_grouped(pool, *grouped, y, x, two_planes ? second_plane(pool) : EncodedRows{});
    return;
  }
  const ActivationKind kind = activation_kind(w.type);
  const TileDotFn dot = quantized_ ? tile_dot_fn(w.type, isa_) : nullptr;
  if (kind == ActivationKind::F32 || dot == nullptr) {
    matvec(pool, w, x_, y, sgemm);
    return;
  }
  if (!w.data) throw_error<UsageError>("matmul: tensor {} has no data", w.name);
  const std::int64_t rows = w.rows, n_tokens = n_tokens_, cols = cols_;
  if (static_cast<std::int64_t>(y.size()) != rows * n_tokens) {
    throw_error<UsageError>("matmul: output of {} floats for {} tokens x {} rows of {}", y.size(),
                            n_tokens, rows, w.name);
  }
  const EncodedRows x = encoded(pool, kind);
  const EncodedRows x2 =
      two_planes && kind == ActivationKind::Q8 ? second_plane(pool) : EncodedRows{};
  const std::int64_t stride = row_bytes(w.type, cols);
  const auto* base = static_cast<const std::byte*>(w.data);
  float* out = y.data();
  const std::int64_t min_rows = std::max<std::int64_t>(1, kMinMacsPerChunk / (cols * n_tokens));
  const std::size_t element = kind == ActivationKind::Q8 ? sizeof(Q8Block) : sizeof(std::uint16_t);
  pool.parallel_for(
      rows,
      [=](std::int64_t begin, std::int64_t end) {
        float second[kMaxTileTokens * kMaxTileRows];
        // tiles of up to 4 rows x 4 tokens; the rows of a tile stay in L1 while the tokens pass
        for (std::int64_t r = begin; r < end; r += kMaxTileRows) {
          const int nr = static_cast<int>(std::min<std::int64_t>(kMaxTileRows, end - r));
          for (std::int64_t t = 0; t < n_tokens; t += kMaxTileTokens) {
            const int nt = static_cast<int>(std::min<std::int64_t>(kMaxTileTokens, n_tokens - t));
            const auto offset = static_cast<std::ptrdiff_t>(t * x.stride * element);
            dot(base + r * stride, stride, nr, cols,
                {static_cast<const char*>(x.data) + offset, x.stride}, nt, out + t * rows + r,
                rows);
            if (x2.data == nullptr) continue;
            // the second plane while the rows are still in L1
            dot(base + r * stride, stride, nr, cols,
                {static_cast<const char*>(x2.data) + offset, x2.stride}, nt, second, kMaxTileRows);
            for (int i = 0; i < nt; ++i) {
              for (int j = 0; j < nr; ++j)
                out[(t + i) * rows + r + j] += second[i * kMaxTileRows + j];
            }
          }
        }
      },
      min_rows);
}

// The codes of x - d1 q1 for the current input, whose first plane (q8_) is made.
EncodedRows Matmul::second_plane(ThreadPool& pool) {
  const std::int64_t blocks = cols_ / kQ8BlockValues;
  grow(q8_second_, n_tokens_ * blocks);
  const Q8Block* first = q8_.data();
  Q8Block* out = q8_second_.data();
  const float* x = x_.data();
  pool.parallel_for(n_tokens_, [=](std::int64_t begin, std::int64_t end) {
    float residual[kQ8BlockValues];
    for (std::int64_t b = begin * blocks; b < end * blocks; ++b) {
      for (int i = 0; i < kQ8BlockValues; ++i) {
        residual[i] = x[b * kQ8BlockValues + i] - first[b].d * static_cast<float>(first[b].q[i]);
      }
      quantize_row_q8(residual, {out + b, 1});
    }
  });
  return {q8_second_.data(), blocks};
}

// Groups of 8 rows split over the pool; each group against the tokens 4 at a time (and
// against the second plane, when there is one, while the group is still in L1). A last
// group of fewer than 8 rows writes through a small buffer.
void Matmul::project_grouped(ThreadPool& pool, const InterleavedMatrix& w, std::span<float> y,
                             EncodedRows x, EncodedRows x2) {
  const InterleavedDotFn dot = interleaved_dot_fn(w.type(), isa_);
  const std::int64_t rows = w.rows(), n_tokens = n_tokens_, n_blocks = w.cols() / 32;
  float* out = y.data();
  const std::int64_t min_groups =
      std::max<std::int64_t>(1, kMinMacsPerChunk / (w.cols() * n_tokens * kInterleavedRows));
  pool.parallel_for(
      w.n_groups(),
      [=, &w](std::int64_t begin, std::int64_t end) {
        float partial[kMaxTileTokens * kInterleavedRows];
        float second[kMaxTileTokens * kInterleavedRows];
        for (std::int64_t g = begin; g < end; ++g) {
          const std::int64_t row0 = g * kInterleavedRows;
          const std::int64_t valid = std::min<std::int64_t>(kInterleavedRows, rows - row0);
          for (std::int64_t t = 0; t < n_tokens; t += kMaxTileTokens) {
            const int nt = static_cast<int>(std::min<std::int64_t>(kMaxTileTokens, n_tokens - t));
            const EncodedRows xt{static_cast<const Q8Block*>(x.data) + t * x.stride, x.stride};
            if (x2.data == nullptr && valid == kInterleavedRows) {
              dot(w.group(g), n_blocks, xt, nt, out + t * rows + row0, rows);
              continue;
            }
            dot(w.group(g), n_blocks, xt, nt, partial, kInterleavedRows);
            if (x2.data != nullptr) {
              const EncodedRows x2t{static_cast<const Q8Block*>(x2.data) + t * x2.stride,
                                    x2.stride};
              dot(w.group(g), n_blocks, x2t, nt, second, kInterleavedRows);
              for (int i = 0; i < nt * kInterleavedRows; ++i) partial[i] += second[i];
            }
            for (int i = 0; i < nt; ++i) {
              std::copy_n(partial + i * kInterleavedRows, valid, out + (t + i) * rows + row0);
            }
          }
        }
      },
      min_groups);
}

std::uint64_t Matmul::scratch_bytes() const {
  return q8_.capacity() * sizeof(Q8Block) + (f16_.capacity() + bf16_.capacity()) * 2 +
         q8_second_.capacity() * sizeof(Q8Block);
}

}  // namespace kvscope
