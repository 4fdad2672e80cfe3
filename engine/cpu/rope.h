// Rotary position embedding. Pair i of a head (of rope_dim / 2 pairs) turns by the angle
// pos * freq[i], with freq[i] = theta^(-2i / rope_dim) adjusted by the model's scaling:
//   Linear   freq / factor (position interpolation).
//   Dynamic  NTK-aware: theta' = theta * (factor * ctx / orig - (factor - 1))^(d / (d - 2)),
//            as Hugging Face's "dynamic" type, but fixed once for the context the engine runs
//            at (ctx) rather than re-derived as the sequence grows: keys in the KV cache are
//            stored rotated, so the angles must not change under them. No change when
//            ctx <= orig.
//   Llama3   per frequency, by wavelength 2pi / freq against orig / high_freq_factor and
//            orig / low_freq_factor: short waves kept, long waves / factor, a smooth mix in
//            between (Hugging Face _compute_llama3_parameters).
//   Yarn     as ggml_rope_yarn: interpolation (freq / factor) for long waves, extrapolation for
//            short, a linear ramp over the dims between the beta_fast and beta_slow correction
//            dims, and cos/sin scaled by attn_factor * (1 + 0.1 ln factor).
// Angles are computed in double from the exact frequency (ggml's CPU op accumulates
// theta *= theta_scale in float, its CUDA op uses powf: both within a few ulp of this).
//
// Pairing (see RopePairing): Adjacent rotates (x[2i], x[2i+1]); HalfSplit rotates
// (x[i], x[i + rope_dim/2]). Dims at and past rope_dim are left as they are.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/model_spec.h"

namespace kvscope {

// YaRN knobs with llama.cpp's defaults (ext_factor 1 turns the ramp fully on).
struct RopeYarnParams {
  double ext_factor = 1.0;
  double attn_factor = 1.0;
  double beta_fast = 32.0;
  double beta_slow = 1.0;
};

struct RopeConfig {
  std::int64_t head_dim = 0;
  std::int64_t rope_dim = 0;  // even, <= head_dim
  double theta = 10000.0;
  RopeScaling scaling;
  RopePairing pairing = RopePairing::Adjacent;
  std::int64_t context_length = 0;  // the context the engine runs at (Dynamic NTK)
  RopeYarnParams yarn;
  // Optional per-pair divisors of the frequency (a GGUF rope_freqs tensor, [rope_dim / 2]).
  std::vector<float> freq_factors;
};

// The RopeConfig a model's spec implies when it runs with `context_length` tokens.
RopeConfig rope_config(const ModelSpec& spec, std::int64_t context_length);
// The sliding-window layers' own RoPE where the spec gives them one (rope_theta_local, or no
// scaling: Gemma 3), else nullopt (rope_config serves every layer).
std::optional<RopeConfig> local_rope_config(const ModelSpec& spec, std::int64_t context_length);

class Rope {
 public:
  // Validates the config (UsageError / ModelError naming the field) and derives the
  // per-pair frequencies.
  explicit Rope(RopeConfig config);

  const RopeConfig& config() const { return config_; }
  std::int64_t n_pairs() const { return config_.rope_dim / 2; }
  // Radians per position of each pair, scaling applied: [rope_dim / 2].
  std::span<const double> freqs() const { return freqs_; }
  // The factor cos and sin are multiplied by (1 unless Yarn).
  double magnitude() const { return magnitude_; }

  // cos/sin of every pair's angle at `pos` (magnitude included): cos, sin: [rope_dim / 2].
  // One call per token serves every head of every layer.
  void angles(std::int64_t pos, std::span<float> cos, std::span<float> sin) const;

  // Rotates n_heads head vectors in place by precomputed angles.
  // x: [n_heads][head_dim]; cos, sin: [rope_dim / 2].
  void rotate(std::span<float> x, std::span<const float> cos, std::span<const float> sin) const;

  // angles + rotate, for one position. x: [n_heads][head_dim].
  void apply(std::span<float> x, std::int64_t pos) const;

 private:
  RopeConfig config_;
  std::vector<double> freqs_;  // [rope_dim / 2]
  double magnitude_ = 1.0;
};

}  // namespace kvscope
