#include "kv/format/synthetic_kv.h"

#include <cmath>
#include <numbers>
#include <random>

#include "util/error.h"

namespace kvscope {

namespace {

constexpr std::int64_t kMaxValues = std::int64_t{1} << 26;  // 256 MiB of floats

// Standard normal pairs from two uniforms in (0, 1] (Box-Muller).
class NormalSource {
 public:
  explicit NormalSource(std::uint64_t seed) : rng_(seed) {}

  float next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = uniform();
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 2.0 * std::numbers::pi * u2;
    spare_ = static_cast<float>(r * std::sin(a));
    has_spare_ = true;
    return static_cast<float>(r * std::cos(a));
  }

 private:
  // 53 random bits mapped to (0, 1]: never 0, so log(u1) is finite.
  double uniform() { return (static_cast<double>(rng_() >> 11) + 1.0) * 0x1.0p-53; }

  std::mt19937_64 rng_;
  float spare_ = 0.0f;
  bool has_spare_ = false;
};

void validate(const SyntheticKvSpec& s) {
  if (s.n_vectors < 1 || s.head_dim < 1 || s.n_vectors > kMaxValues / s.head_dim) {
    throw_error<UsageError>(
        "synthetic K/V: n_vectors {} x head_dim {} must both be >= 1 and hold at most {} values",
        s.n_vectors, s.head_dim, kMaxValues);
  }
  if (s.n_outlier_channels < 0 || s.n_outlier_channels > s.head_dim) {
    throw_error<UsageError>("synthetic K/V: n_outlier_channels {} is outside [0, head_dim {}]",
                            s.n_outlier_channels, s.head_dim);
  }
  if (!std::isfinite(s.outlier_scale) || s.outlier_scale <= 0.0f) {
    throw_error<UsageError>("synthetic K/V: outlier_scale {} must be a positive number",
                            s.outlier_scale);
  }
}

}  // namespace

std::vector<std::int64_t> synthetic_outlier_channels(std::int64_t head_dim,
                                                     std::int64_t n_outlier_channels) {
  std::vector<std::int64_t> channels;
  for (std::int64_t i = 0; i < n_outlier_channels; ++i) {
    channels.push_back((2 * i + 1) * head_dim / (2 * n_outlier_channels));
  }
  return channels;
}

SyntheticKv make_synthetic_kv(const SyntheticKvSpec& spec) {
  validate(spec);
  SyntheticKv kv;
  kv.n_vectors = spec.n_vectors;
  kv.head_dim = spec.head_dim;
  kv.outlier_channels = synthetic_outlier_channels(spec.head_dim, spec.n_outlier_channels);
  // [head_dim] standard deviation of each channel
  std::vector<float> sigma(static_cast<std::size_t>(spec.head_dim), 1.0f);
  for (const std::int64_t c : kv.outlier_channels) {
    sigma[static_cast<std::size_t>(c)] = spec.outlier_scale;
  }
  kv.values.resize(static_cast<std::size_t>(spec.n_vectors * spec.head_dim));
  NormalSource normal(spec.seed);
  for (std::size_t i = 0; i < kv.values.size(); ++i) {
    kv.values[i] = normal.next() * sigma[i % sigma.size()];
  }
  return kv;
}

}  // namespace kvscope
