// Synthetic K/V vectors for the quantization demo when no model is loaded: Gaussian values
// (mean 0, standard deviation 1) in which a few "outlier channels" are scaled up, the
// pattern real keys show (a handful of channels 10-100x larger than the rest). Outliers
// decide a quantization group's scale, so every ordinary value sharing a group with one
// is stored on a coarse grid: that is what the demo makes visible.
//
// Deterministic for a given seed on every platform (its own Box-Muller over mt19937_64,
// not std::normal_distribution, whose output the standard leaves to the library).
#pragma once

#include <cstdint>
#include <vector>

namespace kvscope {

struct SyntheticKvSpec {
  std::int64_t n_vectors = 1024;  // tokens x KV heads
  std::int64_t head_dim = 128;
  std::int64_t n_outlier_channels = 2;  // 0 .. head_dim
  float outlier_scale = 10.0f;          // > 0: the outlier channels' standard deviation
  std::uint64_t seed = 1;
};

struct SyntheticKv {
  std::int64_t n_vectors = 0;
  std::int64_t head_dim = 0;
  std::vector<float> values;                   // [n_vectors][head_dim]
  std::vector<std::int64_t> outlier_channels;  // ascending
};

// The outlier channels: spread evenly over the vector, channel (2i + 1) * head_dim / (2n)
// for i < n, so with head_dim 128 and groups of 32 two outliers land in groups 1 and 3
// and leave groups 0 and 2 clean.
std::vector<std::int64_t> synthetic_outlier_channels(std::int64_t head_dim,
                                                     std::int64_t n_outlier_channels);

// UsageError naming the field when n_vectors or head_dim is < 1 (or their product is over
// 2^26 values), n_outlier_channels is outside [0, head_dim] or outlier_scale is not a
// positive finite number.
SyntheticKv make_synthetic_kv(const SyntheticKvSpec& spec);

}  // namespace kvscope
