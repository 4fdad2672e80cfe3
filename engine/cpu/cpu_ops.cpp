#include "cpu/cpu_ops.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "cpu/ggml_compat.h"
#include "cpu/thread_pool.h"
#include "quant/tensor_type.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {

namespace {

// A matvec chunk should carry at least this many multiply-adds, so the cost of handing it to
// a thread stays small beside its work; smaller projections run on the calling thread.
constexpr std::int64_t kMinMacsPerChunk = 32 * 1024;

std::int64_t ssize(std::span<const float> s) {
  return static_cast<std::int64_t>(s.size());
}

// Rows in `x` when each row has n values; UsageError when it does not divide.
std::int64_t rows_of(std::span<const float> x, std::int64_t n, const char* op) {
  if (n <= 0) throw_error<UsageError>("{}: row length must be positive (got {})", op, n);
  if (ssize(x) % n != 0) {
    throw_error<UsageError>("{}: buffer of {} floats is not a whole number of rows of {}", op,
                            x.size(), n);
  }
  return ssize(x) / n;
}

void check_same_size(std::int64_t a, std::int64_t b, const char* op, const char* what) {
  if (a != b) throw_error<UsageError>("{}: {} has {} floats, expected {}", op, what, b, a);
}

// Calls fn(load) where load(i) returns element i of a 1-D weight of n values as float. The one
// place that decides which stored types a vector weight (norm, bias) may have.
template <typename Fn>
void visit_vector(const WeightView& w, std::int64_t n, const char* op, Fn&& fn) {
  if (!w.data) throw_error<UsageError>("{}: tensor {} has no data", op, w.name);
  if (w.rows * w.cols != n) {
    throw_error<UsageError>("{}: tensor {} has {}x{} values, expected {}", op, w.name, w.rows,
                            w.cols, n);
  }
  switch (w.type) {
    case TensorType::F32: {
      const auto* p = static_cast<const float*>(w.data);
      return fn([p](std::int64_t i) { return p[i]; });
    }
    case TensorType::F16: {
      const auto* p = static_cast<const std::uint16_t*>(w.data);
      return fn([p](std::int64_t i) { return fp16_to_float(p[i]); });
    }
    case TensorType::BF16: {
      const auto* p = static_cast<const std::uint16_t*>(w.data);
      return fn([p](std::int64_t i) { return bf16_to_float(p[i]); });
    }
    default:
      throw_error<UsageError>("{}: tensor {} is {}; a vector weight must be f32, f16 or bf16", op,
                              w.name, tensor_type_name(w.type));
  }
}

// rmsnorm over rows of n values with weight element i given by load(i).
template <typename Load>
void rmsnorm_rows(std::span<const float> x, std::int64_t n, Load load, float eps,
                  std::span<float> out) {
  const std::int64_t n_rows = rows_of(x, n, "rmsnorm");
  check_same_size(ssize(x), static_cast<std::int64_t>(out.size()), "rmsnorm", "out");
  for (std::int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x.data() + r * n;
    float* yr = out.data() + r * n;
    double sum = 0.0;  // ggml_float: the square is formed in float, summed in double
    for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(xr[i] * xr[i]);
    const auto mean = static_cast<float>(sum / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(mean + eps);
    // ggml scales first (rms_norm) and multiplies by the weight after (a separate mul op).
    for (std::int64_t i = 0; i < n; ++i) yr[i] = (xr[i] * scale) * load(i);
  }
}

template <typename Load>
void add_bias_rows(std::span<float> y, std::int64_t n, Load load) {
  const std::int64_t n_rows = rows_of(y, n, "add_bias");
  for (std::int64_t r = 0; r < n_rows; ++r) {
    float* yr = y.data() + r * n;
    for (std::int64_t i = 0; i < n; ++i) yr[i] += load(i);
  }
}

}  // namespace

void rmsnorm(std::span<const float> x, std::span<const float> weight, float eps,
             std::span<float> out) {
  const float* w = weight.data();
  rmsnorm_rows(
      x, ssize(weight), [w](std::int64_t i) { return w[i]; }, eps, out);
}

void rmsnorm(std::span<const float> x, const WeightView& weight, float eps, std::span<float> out) {
  const std::int64_t n = weight.rows * weight.cols;
  visit_vector(weight, n, "rmsnorm", [&](auto load) { rmsnorm_rows(x, n, load, eps, out); });
}

void matvec(ThreadPool& pool, const WeightView& w, std::span<const float> x, std::span<float> y,
            std::span<const std::uint8_t> sgemm) {
  if (!w.data) throw_error<UsageError>("matvec: tensor {} has no data", w.name);
  const std::int64_t rows = w.rows;
  const std::int64_t cols = w.cols;
  const auto& info = tensor_type_info(w.type);
  if (rows <= 0 || cols <= 0 || cols % info.block_elems != 0) {
    throw_error<UsageError>("matvec: tensor {} is {}x{} of {} (rows of {}-value blocks)", w.name,
                            rows, cols, info.name, info.block_elems);
  }
  const std::int64_t n_tokens = rows_of(x, cols, "matvec");
  check_same_size(n_tokens * rows, static_cast<std::int64_t>(y.size()), "matvec", "y");

  const std::int64_t stride = row_bytes(w.type, cols);
  const auto* base = static_cast<const std::byte*>(w.data);
  const RowDotFn dot = row_dot_fn(w.type, cols);
  const float* xs = x.data();
  float* ys = y.data();
  const std::int64_t min_rows = std::max<std::int64_t>(1, kMinMacsPerChunk / (cols * n_tokens));
  if (!sgemm.empty() && static_cast<std::int64_t>(sgemm.size()) != n_tokens) {
    throw_error<UsageError>("matvec: {} sgemm flags for {} tokens", sgemm.size(), n_tokens);
  }
  if (w.type == TensorType::F32) {  // llama.cpp's summation order (ggml_compat.h)
    const bool shape_ok = ggml_mul_mat_uses_sgemm(rows, cols, 2);
    const std::uint8_t* flags = sgemm.data();
    pool.parallel_for(
        rows,
        [=](std::int64_t begin, std::int64_t end) {
          const auto* wf = reinterpret_cast<const float*>(base);
          for (std::int64_t t = 0; t < n_tokens; ++t) {
            const bool batch = shape_ok && flags && flags[t];
            ggml_mat_vec_f32(wf + begin * cols, end - begin, cols, xs + t * cols,
                             ys + t * rows + begin, batch);
          }
        },
        min_rows);
    return;
  }
  pool.parallel_for(
      rows,
      [=](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r = begin; r < end; ++r) {
          const void* row = base + r * stride;
          // the token loop inside: this row stays in cache while every token uses it
          for (std::int64_t t = 0; t < n_tokens; ++t) {
            ys[t * rows + r] = dot(row, xs + t * cols, cols);
          }
        }
      },
      min_rows);
}

void add_bias(std::span<float> y, std::span<const float> bias) {
  const float* b = bias.data();
  add_bias_rows(y, ssize(bias), [b](std::int64_t i) { return b[i]; });
}

void add_bias(std::span<float> y, const WeightView& bias) {
  const std::int64_t n = bias.rows * bias.cols;
  visit_vector(bias, n, "add_bias", [&](auto load) { add_bias_rows(y, n, load); });
}

float silu(float x) {
  return x / (1.0f + std::exp(-x));
}

void swiglu(std::span<const float> gate, std::span<const float> up, std::span<float> out) {
  check_same_size(ssize(gate), ssize(up), "swiglu", "up");
  check_same_size(ssize(gate), static_cast<std::int64_t>(out.size()), "swiglu", "out");
  for (std::size_t i = 0; i < gate.size(); ++i) out[i] = silu(gate[i]) * up[i];
}

void add_in_place(std::span<float> x, std::span<const float> y) {
  check_same_size(static_cast<std::int64_t>(x.size()), ssize(y), "add_in_place", "y");
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];
}

void soft_cap(std::span<float> x, float cap) {
  if (!(cap > 0.0f)) throw_error<UsageError>("soft_cap: cap must be positive, got {}", cap);
  const float inv = 1.0f / cap;
  for (float& v : x) v = std::tanh(v * inv) * cap;
}

void softmax(std::span<float> x) {
  if (x.empty()) return;
  float max = -std::numeric_limits<float>::infinity();
  for (const float v : x) max = std::max(max, v);
  if (max == -std::numeric_limits<float>::infinity()) {
    std::fill(x.begin(), x.end(), 0.0f);  // nothing to weigh: no probability anywhere
    return;
  }
  double sum = 0.0;
  for (float& v : x) {
    v = std::exp(v - max);
    sum += static_cast<double>(v);
  }
  const auto scale = static_cast<float>(1.0 / sum);
  for (float& v : x) v *= scale;
}

void log_softmax(std::span<const float> x, std::span<float> out) {
  check_same_size(ssize(x), static_cast<std::int64_t>(out.size()), "log_softmax", "out");
  if (x.empty()) return;
  float max = -std::numeric_limits<float>::infinity();
  for (const float v : x) max = std::max(max, v);
  if (max == -std::numeric_limits<float>::infinity()) {
    std::fill(out.begin(), out.end(), -std::numeric_limits<float>::infinity());
    return;
  }
  double sum = 0.0;
  for (const float v : x) sum += static_cast<double>(std::exp(v - max));
  const auto log_sum = static_cast<float>(std::log(sum));
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = (x[i] - max) - log_sum;
}

}  // namespace kvscope
