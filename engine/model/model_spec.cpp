#include "model/model_spec.h"

#include <cmath>

#include "util/error.h"

namespace kvscope {

namespace {

// Upper bounds far beyond any real Llama-family model. They keep every product the engine
// forms from these fields (q_dim, vocab * dim, n_layers * context * kv_dim) inside 64 bits,
// so a hostile file cannot overflow a size computation further down.
constexpr std::int64_t kMaxLayers = 1 << 12;
constexpr std::int64_t kMaxWidth = 1 << 20;  // dim, ffn_dim, head_dim
constexpr std::int64_t kMaxHeads = 1 << 14;
constexpr std::int64_t kMaxVocab = 1 << 24;
constexpr std::int64_t kMaxContext = std::int64_t{1} << 30;

void check_range(std::string_view field, std::int64_t value, std::int64_t max) {
  if (value <= 0) throw_error<ModelError>("model {}: must be positive, got {}", field, value);
  if (value > max) {
    throw_error<ModelError>("model {}: {} is larger than the supported maximum {}", field, value,
                            max);
  }
}

void check_positive_finite(std::string_view field, double value) {
  if (!std::isfinite(value) || value <= 0.0) {
    throw_error<ModelError>("model {}: must be a positive finite number, got {}", field, value);
  }
}

void validate_rope_scaling(const ModelSpec& spec) {
  const RopeScaling& s = spec.rope_scaling;
  if (s.type == RopeScalingType::None) return;
  const auto name = rope_scaling_name(s.type);
  if (!std::isfinite(s.factor) || s.factor < 1.0) {
    throw_error<ModelError>("model rope_scaling.factor: {} scaling needs a factor >= 1, got {}",
                            name, s.factor);
  }
  if (s.original_context < 0 || s.original_context > kMaxContext) {
    throw_error<ModelError>("model rope_scaling.original_context: {} is out of range",
                            s.original_context);
  }
  if (s.type == RopeScalingType::Llama3) {
    // llama3 interpolates between the two wavelength bounds original_context / factor;
    // both must exist and differ or the smoothing divides by zero.
    if (s.original_context == 0) {
      throw_error<ModelError>(
          "model rope_scaling.original_max_position_embeddings: llama3 scaling needs it");
    }
    check_positive_finite("rope_scaling.low_freq_factor", s.low_freq_factor);
    check_positive_finite("rope_scaling.high_freq_factor", s.high_freq_factor);
    if (s.high_freq_factor <= s.low_freq_factor) {
      throw_error<ModelError>(
          "model rope_scaling: high_freq_factor {} must be larger than low_freq_factor {}",
          s.high_freq_factor, s.low_freq_factor);
    }
  }
}

}  // namespace

void validate(const ModelSpec& spec) {
  if (spec.architecture.empty()) throw_error<ModelError>("model architecture: missing");
  check_range("n_layers", spec.n_layers, kMaxLayers);
  check_range("dim", spec.dim, kMaxWidth);
  check_range("n_heads", spec.n_heads, kMaxHeads);
  check_range("n_kv_heads", spec.n_kv_heads, kMaxHeads);
  check_range("head_dim", spec.head_dim, kMaxWidth);
  check_range("rope_dim", spec.rope_dim, kMaxWidth);
  check_range("ffn_dim", spec.ffn_dim, kMaxWidth);
  check_range("vocab_size", spec.vocab_size, kMaxVocab);
  check_range("context_length", spec.context_length, kMaxContext);

  if (spec.n_heads % spec.n_kv_heads != 0) {
    throw_error<ModelError>(
        "model n_heads {} is not a multiple of n_kv_heads {} (each KV head serves a whole "
        "group of query heads)",
        spec.n_heads, spec.n_kv_heads);
  }
  if (spec.head_dim % 2 != 0) {
    throw_error<ModelError>("model head_dim {} is odd; RoPE rotates pairs of values",
                            spec.head_dim);
  }
  if (spec.rope_dim % 2 != 0 || spec.rope_dim > spec.head_dim) {
    throw_error<ModelError>("model rope_dim {} must be even and at most head_dim {}", spec.rope_dim,
                            spec.head_dim);
  }
  if (spec.q_dim() > kMaxWidth * 4) {
    throw_error<ModelError>("model n_heads {} x head_dim {} = {} is larger than supported",
                            spec.n_heads, spec.head_dim, spec.q_dim());
  }
  check_positive_finite("rope_theta", spec.rope_theta);
  check_positive_finite("norm_eps", spec.norm_eps);
  if (spec.sliding_window < 0 || spec.sliding_window > kMaxContext) {
    throw_error<ModelError>("model sliding_window: {} is out of range", spec.sliding_window);
  }
  if (spec.sliding_window_period < 0 || spec.sliding_window_period > kMaxLayers) {
    throw_error<ModelError>("model sliding_window_period: {} is out of range",
                            spec.sliding_window_period);
  }
  if (spec.rope_theta_local != 0.0)
    check_positive_finite("rope_theta_local", spec.rope_theta_local);
  check_positive_finite("embedding_scale", spec.embedding_scale);
  if (spec.attention_scale != 0.0) check_positive_finite("attention_scale", spec.attention_scale);
  if (spec.attn_softcap != 0.0) check_positive_finite("attn_softcap", spec.attn_softcap);
  if (spec.final_softcap != 0.0) check_positive_finite("final_softcap", spec.final_softcap);
  validate_rope_scaling(spec);
}

void apply_architecture_defaults(ModelSpec& s) {
  const std::string& a = s.architecture;
  if (a == "qwen3") s.qk_norm = true;
  if (a != "gemma3" && a != "gemma2") return;
  const bool gemma3 = a == "gemma3";
  s.sliding_window_period = gemma3 ? 6 : 2;
  if (gemma3) {
    s.rope_theta_local = 10000.0;
    s.rope_scaling_local = false;
    s.qk_norm = true;
  } else {
    s.attn_softcap = 50.0;
    s.final_softcap = 30.0;
  }
  s.post_norms = true;
  s.ffn_activation = FfnActivation::GeluTanh;
  s.embedding_scale = std::sqrt(static_cast<double>(static_cast<float>(s.dim)));
  const bool is_27b = s.n_layers == (gemma3 ? 62 : 46);
  const std::int64_t scalar = is_27b && s.n_heads > 0 ? s.dim / s.n_heads : s.head_dim;
  if (scalar > 0) s.attention_scale = 1.0 / std::sqrt(static_cast<double>(scalar));
}

bool ModelSpec::layer_slides(std::int64_t layer) const {
  if (sliding_window <= 0) return false;
  const std::int64_t p = sliding_window_period;
  return p == 0 || layer % p < p - 1;
}

std::int64_t ModelSpec::layer_window(std::int64_t layer) const {
  return layer_slides(layer) ? sliding_window : 0;
}

double ModelSpec::score_scale() const {
  return attention_scale != 0.0 ? attention_scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

bool ModelSpec::has_local_rope() const {
  const bool own_theta = rope_theta_local != 0.0 && rope_theta_local != rope_theta;
  const bool unscaled = !rope_scaling_local && rope_scaling.type != RopeScalingType::None;
  return sliding_window > 0 && (own_theta || unscaled);
}

std::int64_t resolve_head_dim(std::int64_t dim, std::int64_t n_heads,
                              std::optional<std::int64_t> explicit_head_dim,
                              std::string_view dim_field, std::string_view heads_field) {
  if (explicit_head_dim) return *explicit_head_dim;
  if (n_heads <= 0) throw_error<ModelError>("{}: must be positive, got {}", heads_field, n_heads);
  if (dim % n_heads != 0) {
    throw_error<ModelError>(
        "{} = {} is not a multiple of {} = {}, and no head dimension is given explicitly",
        dim_field, dim, heads_field, n_heads);
  }
  return dim / n_heads;
}

std::string_view rope_scaling_name(RopeScalingType type) {
  switch (type) {
    case RopeScalingType::None:
      return "none";
    case RopeScalingType::Linear:
      return "linear";
    case RopeScalingType::Dynamic:
      return "dynamic";
    case RopeScalingType::Llama3:
      return "llama3";
    case RopeScalingType::Yarn:
      return "yarn";
  }
  return "unknown";
}

}  // namespace kvscope
