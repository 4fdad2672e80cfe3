#include "model/hf_config.h"

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

ModelSpec spec_from_json(const json& config, const std::string& source) {
  if (!config.is_object()) {
    throw_error<ModelError>("{}: expected a JSON object, found {}", source, config.type_name());
  }
  const auto model_type = hf::find_string(config, "model_type", source);
  if (!model_type) throw_error<ModelError>("{}: model_type: missing", source);
  if (*model_type != "llama" && *model_type != "mistral" && *model_type != "qwen2" &&
      *model_type != "qwen3") {
    throw_error<ModelError>(
        "{}: model_type '{}' is not supported (KVScope runs llama, mistral, qwen2 and qwen3)",
        source, quote_prefix(*model_type));
  }

  ModelSpec spec;
  spec.architecture = *model_type;
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
  apply_architecture_defaults(spec);  // qwen3: q/k norms
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
