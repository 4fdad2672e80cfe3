#include "model/hf_model.h"

#include <filesystem>
#include <set>

#include <fmt/ranges.h>

#include "model/folder_file.h"
#include "model/generation_config.h"
#include "model/hf_config.h"
#include "model/hf_json.h"
#include "model/json_reader.h"
#include "util/error.h"
#include "util/regular_file.h"

namespace kvscope {

namespace {

// Chat templates are a few KB (the largest published ones ~20 KB); 1 MiB is far beyond any,
// and the text is kept in memory and searched for markers, so a bigger file is refused.
constexpr std::uintmax_t kMaxTemplateBytes = std::uintmax_t{1} << 20;

std::string read_template_file(const std::string& path) {
  const RegularFile file(path);
  if (!file.is_open()) throw_error<ModelError>("{}: cannot read: {}", path, file.error());
  if (file.size() > kMaxTemplateBytes) {
    throw_error<ModelError>("{}: {} bytes is too large for a chat template (at most {})", path,
                            file.size(), kMaxTemplateBytes);
  }
  std::string text(static_cast<std::size_t>(file.size()), '\0');
  text.resize(file.read_at(0, text.data(), text.size()));
  return text;
}

namespace fs = std::filesystem;
using nlohmann::json;

// A dense model's index is under 200 KB (~100 bytes a tensor); 16 MiB is ~160k tensors.
constexpr JsonLimits kIndexLimits{.max_bytes = 16 << 20};
// Chat templates and added-token tables: real files are well under 1 MiB.
constexpr JsonLimits kTokenizerConfigLimits{.max_bytes = 16 << 20};

// Every file of the folder is reached through here: a symbolic link out of the folder (or out
// of its Hugging Face cache repository) is refused (folder_file.h).
std::string join_path(const std::string& folder, const std::string& name) {
  return model_folder_file(folder, name);
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

std::string folder_name(const std::string& folder) {
  std::error_code ec;
  auto p = fs::weakly_canonical(fs::path(folder), ec);
  if (ec) p = fs::path(folder).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

std::optional<TensorType> tensor_type_of(SafetensorsDtype dtype) {
  switch (dtype) {
    case SafetensorsDtype::F32:
      return TensorType::F32;
    case SafetensorsDtype::F16:
      return TensorType::F16;
    case SafetensorsDtype::BF16:
      return TensorType::BF16;
    default:
      return std::nullopt;
  }
}

// tokenizer_config.json "chat_template": a string, or a list of {name, template} from which
// the one named "default" (else the first) is the model's template.
std::optional<std::string> chat_template_from(const json& config, const std::string& source) {
  auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) {
    throw_error<ModelError>("{}: chat_template: expected a string or a list, found {}", source,
                            it->type_name());
  }
  std::optional<std::string> first;
  for (const auto& entry : *it) {
    const auto name = hf::find_string(entry, "name", source + ": chat_template[]");
    const auto text = hf::find_string(entry, "template", source + ": chat_template[]");
    if (!text) continue;
    if (name == "default") return text;
    if (!first) first = text;
  }
  return first;
}

// tokenizer_config.json's bos_token / eos_token / pad_token: the token's text, or an
// object whose "content" is (transformers' AddedToken form); null or absent: unset.
std::optional<std::string> token_text(const json& config, const char* field,
                                      const std::string& source) {
  const auto it = config.find(field);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    if (auto content = hf::find_string(*it, "content", source + ": " + field)) return content;
  }
  throw_error<ModelError>("{}: {}: expected a token's text or {{\"content\": ...}}, found {}",
                          source, field, describe_json(*it));
}

}  // namespace

HfModel::HfModel(const std::string& folder) {
  format_ = ModelFormat::HuggingFace;
  path_ = folder;
  const auto config_path = join_path(folder, "config.json");
  if (!is_file(config_path)) {
    throw_error<ModelError>("{}: no config.json (not a Hugging Face model folder)", folder);
  }
  spec_ = read_hf_config(config_path);
  spec_.name = folder_name(folder);
  open_weights(folder);
  bind_weights(folder);
  read_tokenizer_files(folder);
}

void HfModel::open_weights(const std::string& folder) {
  const auto index_path = join_path(folder, "model.safetensors.index.json");
  if (is_file(index_path)) return open_index(folder, index_path);
  const auto single = join_path(folder, "model.safetensors");
  if (!is_file(single)) {
    throw_error<ModelError>("{}: no model.safetensors or model.safetensors.index.json", folder);
  }
  shards_.push_back(std::make_unique<SafetensorsFile>(single));
  for (const auto& t : shards_.back()->tensors()) tensors_[t.name] = &t;
}

// The index maps each tensor name to the shard file holding it; open each shard once and
// check that the shard really has every tensor the index promises.
void HfModel::open_index(const std::string& folder, const std::string& index_path) {
  const json index = read_json_file(index_path, kIndexLimits);
  auto map_it = index.is_object() ? index.find("weight_map") : index.end();
  if (map_it == index.end() || !map_it->is_object()) {
    throw_error<ModelError>("{}: weight_map: missing or not an object", index_path);
  }
  // Validate every entry first, then open each shard once, in file name order.
  std::map<std::string, const SafetensorsFile*> by_file;
  for (const auto& [name, file_value] : map_it->items()) {
    if (!file_value.is_string()) {
      throw_error<ModelError>("{}: weight_map[{}]: expected a file name, found {}", index_path,
                              quote_prefix(name), file_value.type_name());
    }
    const auto file = file_value.get<std::string>();
    // Shards live in the folder itself; refuse paths that would leave it (and names no
    // file system allows, 255 bytes being the usual NAME_MAX).
    if (file.empty() || file == "." || file == ".." || file.size() > 255 ||
        file.find_first_of("/\\") != std::string::npos) {
      throw_error<ModelError>("{}: weight_map[{}] = '{}': must be a file name in the folder",
                              index_path, quote_prefix(name), quote_prefix(file));
    }
    by_file[file] = nullptr;
  }
  for (auto& [file, shard] : by_file) {
    shards_.push_back(std::make_unique<SafetensorsFile>(join_path(folder, file)));
    shard = shards_.back().get();
  }
  for (const auto& [name, file_value] : map_it->items()) {
    const auto file = file_value.get<std::string>();
    const SafetensorsTensor* t = by_file.at(file)->find(name);
    if (!t) {
      throw_error<ModelError>("tensor {}: {} lists it in {} but that file does not have it",
                              quote_prefix(name), index_path, file);
    }
    tensors_[name] = t;
  }
}

WeightView HfModel::view(const std::string& name, std::int64_t rows, std::int64_t cols) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    throw_error<ModelError>("tensor {}: missing from {} (the {} config needs it)", name, path_,
                            spec_.architecture);
  }
  const SafetensorsTensor& t = *it->second;
  // PyTorch order: [out_features, in_features] = [rows, cols]; vectors are 1-D [cols].
  const std::vector<std::int64_t> want =
      rows == 0 ? std::vector<std::int64_t>{cols} : std::vector<std::int64_t>{rows, cols};
  if (t.shape != want) {
    throw_error<ModelError>("tensor {}: shape [{}] but the config needs [{}]", name,
                            fmt::join(t.shape, ", "), fmt::join(want, ", "));
  }
  const auto type = tensor_type_of(t.dtype);
  if (!type) {
    throw_error<ModelError>("tensor {}: dtype {} is not supported (F32, F16 or BF16)", name,
                            safetensors_dtype_name(t.dtype));
  }
  return WeightView{name, *type, rows == 0 ? 1 : rows, cols, t.data};
}

WeightView HfModel::vector_view(const std::string& name, std::int64_t n) const {
  return view(name, 0, n);
}

// The text model's tensors are under "model."; a Gemma3ForConditionalGeneration folder keeps
// them under "language_model.model." (as Google published it) or "model.language_model."
// (as newer transformers save it), beside its vision tower's.
std::string HfModel::text_model_prefix() const {
  for (const char* prefix : {"model.", "language_model.model.", "model.language_model."}) {
    if (tensors_.count(std::string(prefix) + "embed_tokens.weight")) return prefix;
  }
  return "model.";
}

// A norm weight as the forward pass multiplies by it. Gemma's RMSNorms (Gemma2RMSNorm,
// Gemma3RMSNorm) store w and scale by 1 + w: that sum is made here, once, in f32, so the forward
// pass is the one a GGUF file (whose converter stored 1 + w) gets.
WeightView HfModel::norm_view(const std::string& name, std::int64_t n) {
  WeightView w = vector_view(name, n);
  if (spec_.architecture != "gemma2" && spec_.architecture != "gemma3") return w;
  std::vector<float> one_plus(static_cast<std::size_t>(n));
  dequantize_row(w.type, w.data, one_plus.data(), n);
  for (float& v : one_plus) v += 1.0f;
  shifted_norms_.push_back(std::move(one_plus));  // the vector's buffer stays where it is
  return WeightView{name, TensorType::F32, 1, n, shifted_norms_.back().data()};
}

void HfModel::bind_weights(const std::string& folder) {
  const ModelSpec& s = spec_;
  const std::string m = text_model_prefix();
  weights_.token_embd = view(m + "embed_tokens.weight", s.vocab_size, s.dim);
  for (std::int64_t i = 0; i < s.n_layers; ++i) {
    const auto p = fmt::format("{}layers.{}.", m, i);
    LayerWeights l;
    l.attn_norm = norm_view(p + "input_layernorm.weight", s.dim);
    l.wq = view(p + "self_attn.q_proj.weight", s.q_dim(), s.dim);
    l.wk = view(p + "self_attn.k_proj.weight", s.kv_dim(), s.dim);
    l.wv = view(p + "self_attn.v_proj.weight", s.kv_dim(), s.dim);
    if (s.qkv_bias) {
      l.bq = vector_view(p + "self_attn.q_proj.bias", s.q_dim());
      l.bk = vector_view(p + "self_attn.k_proj.bias", s.kv_dim());
      l.bv = vector_view(p + "self_attn.v_proj.bias", s.kv_dim());
    }
    if (s.qk_norm) {
      l.q_norm = norm_view(p + "self_attn.q_norm.weight", s.head_dim);
      l.k_norm = norm_view(p + "self_attn.k_norm.weight", s.head_dim);
    }
    l.wo = view(p + "self_attn.o_proj.weight", s.dim, s.q_dim());
    if (s.post_norms) {  // Gemma: post_attention_layernorm is the attention output's norm
      l.post_attn_norm = norm_view(p + "post_attention_layernorm.weight", s.dim);
      l.ffn_norm = norm_view(p + "pre_feedforward_layernorm.weight", s.dim);
      l.post_ffn_norm = norm_view(p + "post_feedforward_layernorm.weight", s.dim);
    } else {
      l.ffn_norm = norm_view(p + "post_attention_layernorm.weight", s.dim);
    }
    l.w_gate = view(p + "mlp.gate_proj.weight", s.ffn_dim, s.dim);
    l.w_up = view(p + "mlp.up_proj.weight", s.ffn_dim, s.dim);
    l.w_down = view(p + "mlp.down_proj.weight", s.dim, s.ffn_dim);
    weights_.layers.push_back(std::move(l));
  }
  // Layers past num_hidden_layers would be silently dropped: a config/weights mismatch.
  const auto extra = fmt::format("{}layers.{}.", m, s.n_layers);
  if (auto it = tensors_.lower_bound(extra);
      it != tensors_.end() && it->first.compare(0, extra.size(), extra) == 0) {
    throw_error<ModelError>("{}: num_hidden_layers = {} but the weights have {} tensors",
                            join_path(folder, "config.json"), s.n_layers, it->first);
  }
  weights_.output_norm = norm_view(m + "norm.weight", s.dim);
  if (spec_.tied_embeddings || tensors_.find("lm_head.weight") == tensors_.end()) {
    spec_.tied_embeddings = true;
    weights_.output = weights_.token_embd;
  } else {
    weights_.output = view("lm_head.weight", s.vocab_size, s.dim);
  }
}

void HfModel::read_tokenizer_files(const std::string& folder) {
  if (auto p = join_path(folder, "tokenizer.model"); is_file(p)) tokenizer_model_ = p;
  if (auto p = join_path(folder, "tokenizer.json"); is_file(p)) tokenizer_json_ = p;
  if (auto p = join_path(folder, "tokenizer_config.json"); is_file(p)) {
    tokenizer_config_ = p;
    special_tokens_.config_path = p;
    const json config = read_json_file(p, kTokenizerConfigLimits);
    if (config.is_object()) {
      chat_template_ = chat_template_from(config, p);
      special_tokens_.add_bos = hf::find_bool(config, "add_bos_token", p);
      special_tokens_.add_eos = hf::find_bool(config, "add_eos_token", p);
      special_tokens_.bos_token = token_text(config, "bos_token", p);
      special_tokens_.eos_token = token_text(config, "eos_token", p);
      special_tokens_.pad_token = token_text(config, "pad_token", p);
    }
  }
  // Newer transformers versions save the template as its own file.
  if (auto p = join_path(folder, "chat_template.jinja"); !chat_template_ && is_file(p)) {
    chat_template_ = read_template_file(p);
  }
  if (auto p = join_path(folder, "generation_config.json"); is_file(p)) read_generation_config(p);
}

// eos_token_id (checked against config.json's vocab_size) for the tokenizer, the sampling
// values for whoever starts a request.
void HfModel::read_generation_config(const std::string& path) {
  GenerationConfig config = kvscope::read_generation_config(path, spec_.vocab_size);
  special_tokens_.generation_config_path = path;
  special_tokens_.eos_token_ids = std::move(config.eos_token_ids);
  sampling_defaults_ = std::move(config.sampling);
}

}  // namespace kvscope
