#include "model/hf_config.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "model/hf_json.h"
#include "model/json_reader.h"
#include "util/error.h"

namespace kvscope {

namespace {

using nlohmann::json;

// Real config.json files are a few KB (a vision tower's nested config, tens of KB).
constexpr JsonLimits kConfigLimits{.max_bytes = 4 << 20};

// rope_scaling: null, or {"rope_type"|"type": ..., "factor": ..., llama3/yarn extras}.
RopeScaling parse_rope_scaling(const json& config, const std::string& source) {
  RopeScaling out;
  auto it = config.find("rope_scaling");
  if (it == config.end() || it->is_null()) return out;
  const json& rs = *it;
  if (!rs.is_object()) {
    throw_error<ModelError>("{}: rope_scaling: expected an object or null, found {}", source,
                            rs.type_name());
  }
  auto type = hf::find_string(rs, "rope_type", source);
  if (!type) type = hf::find_string(rs, "type", source);
  if (!type || *type == "default") return out;
  if (*type == "linear") {
    out.type = RopeScalingType::Linear;
  } else if (*type == "dynamic") {
    out.type = RopeScalingType::Dynamic;
  } else if (*type == "llama3") {
    out.type = RopeScalingType::Llama3;
  } else if (*type == "yarn") {
    out.type = RopeScalingType::Yarn;
  } else {
    throw_error<ModelError>(
        "{}: rope_scaling type '{}' is not supported (linear, dynamic, llama3 or yarn)", source,
        quote_prefix(*type));
  }
  const auto factor = hf::find_float(rs, "factor", source);
  if (!factor) throw_error<ModelError>("{}: rope_scaling.factor: missing", source);
  out.factor = *factor;
  out.original_context = hf::find_int(rs, "original_max_position_embeddings", source).value_or(0);
  out.low_freq_factor = hf::find_float(rs, "low_freq_factor", source).value_or(1.0);
  out.high_freq_factor = hf::find_float(rs, "high_freq_factor", source).value_or(4.0);
  return out;
}

// Mistral uses sliding_window directly (null: off); Qwen2 and Qwen3 list a window but apply it
// only when use_sliding_window is true, and then (as transformers and vLLM do) only to the
// layers from max_window_layers on (28 when absent). One window serves every layer here, so
// a config that slides some layers and not others is refused rather than run differently.
std::int64_t parse_sliding_window(const json& config, const std::string& model_type,
                                  std::int64_t n_layers, const std::string& source) {
  const auto window = hf::find_int(config, "sliding_window", source);
  if (!window || (model_type != "qwen2" && model_type != "qwen3")) return window.value_or(0);
  if (!hf::find_bool(config, "use_sliding_window", source).value_or(false)) return 0;
  const std::int64_t first = hf::find_int(config, "max_window_layers", source).value_or(28);
  if (first >= n_layers) return 0;  // no layer slides
  if (first > 0) {
    throw_error<ModelError>(
        "{}: use_sliding_window with max_window_layers = {}: layers {} to {} would slide over {} "
        "tokens and the ones before them not; KVScope runs one attention window for all layers",
        source, first, first, n_layers - 1, *window);
  }
  return *window;
}

bool is_gemma(const std::string& model_type) {
  return model_type == "gemma2" || model_type == "gemma3_text";
}

// transformers' values for the fields a Gemma config may leave out (Gemma2Config and
// Gemma3TextConfig): Gemma 3 4B's text_config, for one, gives little beyond its sizes and window.
// The config's own fields, null included ("no soft-cap"), win.
json with_gemma_defaults(const json& config, const std::string& model_type) {
  const bool gemma2 = model_type == "gemma2";
  json out = {{"vocab_size", gemma2 ? 256000 : 262208},
              {"hidden_size", 2304},
              {"intermediate_size", 9216},
              {"num_hidden_layers", 26},
              {"num_attention_heads", 8},
              {"num_key_value_heads", 4},
              {"head_dim", 256},
              {"max_position_embeddings", gemma2 ? 8192 : 131072},
              {"rms_norm_eps", 1e-6},
              {"rope_theta", gemma2 ? 10000.0 : 1000000.0},
              {"query_pre_attn_scalar", 256},
              {"sliding_window", 4096},
              {"tie_word_embeddings", true}};
  if (gemma2) {
    out["attn_logit_softcapping"] = 50.0;
    out["final_logit_softcapping"] = 30.0;
  } else {
    out["rope_local_base_freq"] = 10000.0;
    out["sliding_window_pattern"] = 6;
  }
  out.update(config);
  return out;
}

// The period of the sliding layers (ModelSpec::sliding_window_period) that layer_types lists
// ("sliding_attention" / "full_attention" per layer, newer configs), or nullopt without the
// list; a layout no period gives is refused.
std::optional<std::int64_t> period_of_layer_types(const json& config, std::int64_t n_layers,
                                                  const std::string& source) {
  const auto it = config.find("layer_types");
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (!it->is_array() || static_cast<std::int64_t>(it->size()) != n_layers) {
    throw_error<ModelError>("{}: layer_types: expected a list of {} layer types", source, n_layers);
  }
  std::vector<bool> slides;
  for (const json& t : *it) {
    if (!t.is_string() || (t != "sliding_attention" && t != "full_attention")) {
      throw_error<ModelError>(
          "{}: layer_types: {} is neither sliding_attention nor "
          "full_attention",
          source, describe_json(t));
    }
    slides.push_back(t == "sliding_attention");
  }
  // the first global layer ends the first period; none: every layer slides (period 0)
  const auto first_global = std::find(slides.begin(), slides.end(), false);
  const std::int64_t p = first_global == slides.end() ? 0 : first_global - slides.begin() + 1;
  for (std::int64_t l = 0; l < n_layers; ++l) {
    if (slides[static_cast<std::size_t>(l)] != (p == 0 || l % p < p - 1)) {
      throw_error<ModelError>(
          "{}: layer_types: layer {} breaks the pattern of its first {} layers; KVScope runs "
          "sliding layers that repeat with a period",
          source, l, p);
    }
  }
  return p;
}

// What a Gemma config says beyond the llama fields, over apply_architecture_defaults: which
// layers slide, the sliding layers' rope base, the attention scale from query_pre_attn_scalar,
// the soft-caps.
void read_gemma_fields(const json& config, const std::string& source, ModelSpec& spec) {
  spec.sliding_window = hf::find_int(config, "sliding_window", source).value_or(0);
  if (const auto p = period_of_layer_types(config, spec.n_layers, source)) {
    spec.sliding_window_period = *p;  // 1 when no layer slides
  } else if (const auto pattern = hf::find_int(config, "sliding_window_pattern", source)) {
    spec.sliding_window_period = *pattern;
  }
  if (const auto base = hf::find_float(config, "rope_local_base_freq", source)) {
    spec.rope_theta_local = *base;
  }
  const double scalar = hf::find_float(config, "query_pre_attn_scalar", source).value_or(256.0);
  if (!(scalar > 0.0)) {
    throw_error<ModelError>("{}: query_pre_attn_scalar: must be positive, got {}", source, scalar);
  }
  spec.attention_scale = 1.0 / std::sqrt(scalar);
  spec.attn_softcap = hf::find_float(config, "attn_logit_softcapping", source).value_or(0.0);
  spec.final_softcap = hf::find_float(config, "final_logit_softcapping", source).value_or(0.0);
}

ModelSpec spec_from_json(const json& config_in, const std::string& source) {
  if (!config_in.is_object()) {
    throw_error<ModelError>("{}: expected a JSON object, found {}", source, config_in.type_name());
  }
  const auto model_type = hf::find_string(config_in, "model_type", source);
  if (!model_type) throw_error<ModelError>("{}: model_type: missing", source);
  if (*model_type == "gemma3") {  // Gemma3ForConditionalGeneration: its text model
    const auto text = config_in.find("text_config");
    if (text == config_in.end() || !text->is_object()) {
      throw_error<ModelError>("{}: text_config: missing (a gemma3 config holds its text model's)",
                              source);
    }
    json text_config = *text;
    if (!text_config.contains("model_type")) text_config["model_type"] = "gemma3_text";
    return spec_from_json(text_config, source + ": text_config");
  }
  if (*model_type != "llama" && *model_type != "mistral" && *model_type != "qwen2" &&
      *model_type != "qwen3" && !is_gemma(*model_type)) {
    throw_error<ModelError>(
        "{}: model_type '{}' is not supported (KVScope runs llama, mistral, qwen2, qwen3, gemma2 "
        "and gemma3)",
        source, quote_prefix(*model_type));
  }
  const json config =
      is_gemma(*model_type) ? with_gemma_defaults(config_in, *model_type) : config_in;

  ModelSpec spec;
  spec.architecture = *model_type == "gemma3_text" ? "gemma3" : *model_type;
  spec.dim = hf::get_int(config, "hidden_size", source);
  spec.n_layers = hf::get_int(config, "num_hidden_layers", source);
  spec.n_heads = hf::get_int(config, "num_attention_heads", source);
  // Older llama configs predate grouped-query attention: one KV head per query head.
  spec.n_kv_heads = hf::find_int(config, "num_key_value_heads", source).value_or(spec.n_heads);
  spec.head_dim = resolve_head_dim(spec.dim, spec.n_heads, hf::find_int(config, "head_dim", source),
                                   source + ": hidden_size", "num_attention_heads");
  spec.rope_dim = spec.head_dim;
  spec.ffn_dim = hf::get_int(config, "intermediate_size", source);
  spec.vocab_size = hf::get_int(config, "vocab_size", source);
  spec.context_length = hf::get_int(config, "max_position_embeddings", source);
  spec.rope_theta = hf::find_float(config, "rope_theta", source).value_or(10000.0);
  spec.rope_scaling = parse_rope_scaling(config, source);
  // HF checkpoints keep the original Q/K row order, where x[i] pairs with x[i + d/2].
  spec.rope_pairing = RopePairing::HalfSplit;
  spec.norm_eps = hf::find_float(config, "rms_norm_eps", source).value_or(1e-6);
  spec.sliding_window = parse_sliding_window(config, *model_type, spec.n_layers, source);
  spec.tied_embeddings = hf::find_bool(config, "tie_word_embeddings", source).value_or(false);
  spec.qkv_bias =
      *model_type == "qwen2" || hf::find_bool(config, "attention_bias", source).value_or(false);
  apply_architecture_defaults(spec);  // qwen3: q/k norms; Gemma: model_spec.h
  if (is_gemma(*model_type)) read_gemma_fields(config, source, spec);
  try {
    validate(spec);
  } catch (const ModelError& e) {
    throw ModelError(source + ": " + e.what());
  }
  return spec;
}

}  // namespace

ModelSpec parse_hf_config(std::string_view json_text, const std::string& source) {
  return spec_from_json(parse_json(json_text, source, kConfigLimits), source);
}

ModelSpec read_hf_config(const std::string& path) {
  return spec_from_json(read_json_file(path, kConfigLimits), path);
}

}  // namespace kvscope
