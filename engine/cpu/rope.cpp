#include "cpu/rope.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <utility>

#include "cpu/ggml_compat.h"
#include "cpu/simd_dispatch.h"
#include "util/error.h"

namespace kvscope {

namespace {

// Pairs whose cos/sin apply() keeps on the stack (rope_dim up to 512 needs no allocation).
constexpr std::int64_t kStackPairs = 256;

void validate_config(const RopeConfig& c) {
  if (c.head_dim <= 0)
    throw_error<UsageError>("rope: head_dim must be positive (got {})", c.head_dim);
  if (c.rope_dim <= 0 || c.rope_dim % 2 != 0 || c.rope_dim > c.head_dim) {
    throw_error<ModelError>("rope: rope_dim {} must be even and in 2..head_dim ({})", c.rope_dim,
                            c.head_dim);
  }
  if (!(c.theta > 0.0) || !std::isfinite(c.theta)) {
    throw_error<ModelError>("rope: theta (rope_freq_base) must be positive (got {})", c.theta);
  }
  const RopeScaling& s = c.scaling;
  if (s.type != RopeScalingType::None && (!(s.factor > 0.0) || !std::isfinite(s.factor))) {
    throw_error<ModelError>("rope scaling {}: factor must be positive (got {})",
                            rope_scaling_name(s.type), s.factor);
  }
  const bool needs_orig = s.type == RopeScalingType::Dynamic || s.type == RopeScalingType::Llama3 ||
                          s.type == RopeScalingType::Yarn;
  if (needs_orig && s.original_context <= 0) {
    throw_error<ModelError>(
        "rope scaling {}: original context (original_max_position_embeddings) must be positive "
        "(got {})",
        rope_scaling_name(s.type), s.original_context);
  }
  if (s.type == RopeScalingType::Llama3 && !(s.high_freq_factor > s.low_freq_factor)) {
    throw_error<ModelError>(
        "rope scaling llama3: high_freq_factor {} must exceed low_freq_factor {}",
        s.high_freq_factor, s.low_freq_factor);
  }
  if (!c.freq_factors.empty()) {
    if (static_cast<std::int64_t>(c.freq_factors.size()) != c.rope_dim / 2) {
      throw_error<ModelError>("rope: {} frequency factors for {} rotated pairs",
                              c.freq_factors.size(), c.rope_dim / 2);
    }
    if (s.type == RopeScalingType::Llama3) {
      throw_error<ModelError>(
          "rope: llama3 scaling and rope_freqs factors both given; they are the same adjustment");
    }
    for (const float f : c.freq_factors) {
      if (!(f > 0.0f) || !std::isfinite(f)) {
        throw_error<ModelError>("rope: frequency factor {} must be positive", f);
      }
    }
  }
}

// Hugging Face _compute_llama3_parameters for one frequency.
double llama3_freq(double freq, const RopeScaling& s) {
  const double orig = static_cast<double>(s.original_context);
  const double wavelen = 2.0 * std::numbers::pi / freq;
  if (wavelen < orig / s.high_freq_factor) return freq;            // short waves: keep
  if (wavelen > orig / s.low_freq_factor) return freq / s.factor;  // long waves: interpolate
  const double smooth =
      (orig / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  return (1.0 - smooth) * freq / s.factor + smooth * freq;
}

// ggml_rope_yarn_corr_dim: the dim whose wave turns n_rot times over the original context.
double yarn_corr_dim(double n_dims, double orig, double n_rot, double base) {
  return n_dims * std::log(orig / (n_rot * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
}

// ggml_rope_yarn: blends interpolated and extrapolated frequencies pair by pair.
void apply_yarn(std::vector<double>& freqs, const RopeConfig& c) {
  const double d = static_cast<double>(c.rope_dim);
  const double orig = static_cast<double>(c.scaling.original_context);
  const double low = std::max(0.0, std::floor(yarn_corr_dim(d, orig, c.yarn.beta_fast, c.theta)));
  const double high =
      std::min(d - 1.0, std::ceil(yarn_corr_dim(d, orig, c.yarn.beta_slow, c.theta)));
  const double freq_scale = 1.0 / c.scaling.factor;
  for (std::size_t i = 0; i < freqs.size(); ++i) {
    const double y = (static_cast<double>(i) - low) / std::max(0.001, high - low);
    const double ramp_mix = (1.0 - std::clamp(y, 0.0, 1.0)) * c.yarn.ext_factor;
    freqs[i] = freq_scale * freqs[i] * (1.0 - ramp_mix) + freqs[i] * ramp_mix;
  }
}

}  // namespace

RopeConfig rope_config(const ModelSpec& spec, std::int64_t context_length) {
  RopeConfig c;
  c.head_dim = spec.head_dim;
  c.rope_dim = spec.rope_dim > 0 ? spec.rope_dim : spec.head_dim;
  c.theta = spec.rope_theta;
  c.scaling = spec.rope_scaling;
  c.pairing = spec.rope_pairing;
  c.context_length = context_length;
  // HF "dynamic" configs name no original context: it is the model's own max positions.
  if (c.scaling.type == RopeScalingType::Dynamic && c.scaling.original_context <= 0) {
    c.scaling.original_context = spec.context_length;
  }
  return c;
}

std::optional<RopeConfig> local_rope_config(const ModelSpec& spec, std::int64_t context_length) {
  if (!spec.has_local_rope()) return std::nullopt;
  RopeConfig c = rope_config(spec, context_length);
  if (spec.rope_theta_local != 0.0) c.theta = spec.rope_theta_local;
  if (!spec.rope_scaling_local) c.scaling = RopeScaling{};
  return c;
}

Rope::Rope(RopeConfig config) : config_(std::move(config)) {
  validate_config(config_);
  const RopeConfig& c = config_;
  const RopeScaling& s = c.scaling;
  const double d = static_cast<double>(c.rope_dim);
  double theta = c.theta;
  if (s.type == RopeScalingType::Dynamic && c.context_length > s.original_context) {
    if (c.rope_dim <= 2) throw_error<ModelError>("rope scaling dynamic: rope_dim must exceed 2");
    const double ratio =
        static_cast<double>(c.context_length) / static_cast<double>(s.original_context);
    theta *= std::pow(s.factor * ratio - (s.factor - 1.0), d / (d - 2.0));
  }
  freqs_.resize(static_cast<std::size_t>(n_pairs()));
  for (std::size_t i = 0; i < freqs_.size(); ++i) {
    freqs_[i] = std::pow(theta, -2.0 * static_cast<double>(i) / d);
    if (!c.freq_factors.empty()) freqs_[i] /= static_cast<double>(c.freq_factors[i]);
  }
  switch (s.type) {
    case RopeScalingType::None:
    case RopeScalingType::Dynamic:
      break;
    case RopeScalingType::Linear:
      for (double& f : freqs_) f /= s.factor;
      break;
    case RopeScalingType::Llama3:
      for (double& f : freqs_) f = llama3_freq(f, s);
      break;
    case RopeScalingType::Yarn:
      apply_yarn(freqs_, c);
      magnitude_ = c.yarn.attn_factor;
      if (c.yarn.ext_factor != 0.0) magnitude_ *= 1.0 + 0.1 * std::log(s.factor);
      break;
  }
}

void Rope::angles(std::int64_t pos, std::span<float> cos, std::span<float> sin) const {
  if (pos < 0) throw_error<UsageError>("rope: position must not be negative (got {})", pos);
  if (static_cast<std::int64_t>(cos.size()) != n_pairs() ||
      static_cast<std::int64_t>(sin.size()) != n_pairs()) {
    throw_error<UsageError>("rope: cos/sin hold {}/{} values, expected {}", cos.size(), sin.size(),
                            n_pairs());
  }
  const RopeScalingType st = config_.scaling.type;
  if (st == RopeScalingType::None || st == RopeScalingType::Linear) {
    // llama.cpp's CPU angles bit for bit (ggml_compat.h): a float theta chain, cosf / sinf
    const float freq_scale =
        st == RopeScalingType::Linear ? static_cast<float>(1.0 / config_.scaling.factor) : 1.0f;
    ggml_rope_angles(pos,
                     ggml_rope_theta_scale(static_cast<float>(config_.theta), config_.rope_dim),
                     freq_scale, config_.freq_factors, cos, sin);
    return;
  }
  const auto p = static_cast<double>(pos);
  for (std::size_t i = 0; i < freqs_.size(); ++i) {
    const double angle = p * freqs_[i];
    cos[i] = static_cast<float>(std::cos(angle) * magnitude_);
    sin[i] = static_cast<float>(std::sin(angle) * magnitude_);
  }
}

void Rope::rotate(std::span<float> x, std::span<const float> cos,
                  std::span<const float> sin) const {
  const std::int64_t head_dim = config_.head_dim;
  const std::int64_t half = n_pairs();
  if (static_cast<std::int64_t>(x.size()) % head_dim != 0) {
    throw_error<UsageError>("rope: {} values are not whole heads of {}", x.size(), head_dim);
  }
  if (static_cast<std::int64_t>(cos.size()) != half ||
      static_cast<std::int64_t>(sin.size()) != half) {
    throw_error<UsageError>("rope: cos/sin hold {}/{} values, expected {}", cos.size(), sin.size(),
                            half);
  }
  // Adjacent: pair i is (2i, 2i+1); HalfSplit: (i, i + half).
  const bool adjacent = config_.pairing == RopePairing::Adjacent;
  const std::int64_t step = adjacent ? 2 : 1;
  const std::int64_t other = adjacent ? 1 : half;
  // llama.cpp's fused form, but for AVX-only CPUs (no FMA: std::fma is a software call there)
  const auto rotate = use_avx_alone() ? &ggml_rope_rotate_unfused : &ggml_rope_rotate;
  for (float* head = x.data(); head != x.data() + x.size(); head += head_dim) {
    for (std::int64_t i = 0; i < half; ++i) {
      float* a = head + i * step;
      float* b = a + other;
      rotate(*a, *b, cos[i], sin[i]);
    }
  }
}

void Rope::apply(std::span<float> x, std::int64_t pos) const {
  std::array<float, 2 * kStackPairs> stack;  // written by angles() before any read
  std::vector<float> heap;
  std::span<float> buffer(stack);
  if (n_pairs() > kStackPairs) {
    heap.resize(static_cast<std::size_t>(2 * n_pairs()));
    buffer = heap;
  }
  const auto n = static_cast<std::size_t>(n_pairs());
  angles(pos, buffer.subspan(0, n), buffer.subspan(n, n));
  rotate(x, buffer.subspan(0, n), buffer.subspan(n, n));
}

}  // namespace kvscope
