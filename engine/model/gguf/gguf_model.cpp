#include "model/gguf/gguf_model.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <set>

#include <fmt/ranges.h>

#include "util/error.h"
#include "util/utf8.h"

namespace kvscope {

namespace {

// A positive size from "{arch}.{field}", named in the message when it is not one.
std::int64_t meta_size(const GgufFile& f, const std::string& key) {
  const std::int64_t v = f.get_int(key);
  if (v <= 0) throw_error<ModelError>("{}: metadata {} = {}: must be positive", f.path(), key, v);
  return v;
}

std::optional<std::int64_t> find_meta_size(const GgufFile& f, const std::string& key) {
  const auto v = f.find_int(key);
  if (v && *v <= 0) {
    throw_error<ModelError>("{}: metadata {} = {}: must be positive", f.path(), key, *v);
  }
  return v;
}

// llama.cpp's reading: scaling.type defaults to linear, and a factor of 0 or 1 (or none,
// also under the old key rope.scale_linear) means no scaling. llama3 scaling is not in
// the metadata: converters store precomputed frequencies as rope_freqs.weight instead.
RopeScaling read_rope_scaling(const GgufFile& f, const std::string& arch) {
  RopeScaling out;
  auto factor = f.find_float(arch + ".rope.scaling.factor");
  if (!factor) factor = f.find_float(arch + ".rope.scale_linear");
  const auto type = f.find_string(arch + ".rope.scaling.type");
  out.factor = factor && *factor != 0.0 ? *factor : 1.0;
  out.original_context =
      find_meta_size(f, arch + ".rope.scaling.original_context_length").value_or(0);
  if (!type || *type == "linear") {
    out.type = out.factor != 1.0 ? RopeScalingType::Linear : RopeScalingType::None;
  } else if (*type == "none") {
    out.type = RopeScalingType::None;
  } else if (*type == "yarn") {
    out.type = RopeScalingType::Yarn;
  } else {
    throw_error<ModelError>(
        "{}: metadata {}.rope.scaling.type = '{}' is not supported (none, "
        "linear or yarn)",
        f.path(), arch, printable_prefix(*type));
  }
  return out;
}

std::int64_t read_vocab_size(const GgufFile& f) {
  const GgufTensor* embd = f.find_tensor("token_embd.weight");
  if (!embd) throw_error<ModelError>("tensor token_embd.weight: not found in {}", f.path());
  const std::int64_t rows = embd->dims.size() >= 2 ? embd->dims[1] : 0;
  // The tokenizer may list fewer tokens than the embedding has rows (padding), never more:
  // a token id past the last row would read outside the tensor.
  if (const GgufValue* tokens = f.find("tokenizer.ggml.tokens")) {
    const auto n = static_cast<std::int64_t>(tokens->array_size());
    if (rows > 0 && n > rows) {
      throw_error<ModelError>(
          "{}: tokenizer.ggml.tokens has {} tokens but token_embd.weight has only {} rows",
          f.path(), n, rows);
    }
    if (rows == 0) return n;
  }
  return rows;
}

// Shapes compare without trailing 1s: a writer may store [n] as [n, 1].
std::vector<std::int64_t> squeeze(std::vector<std::int64_t> dims) {
  while (dims.size() > 1 && dims.back() == 1) dims.pop_back();
  return dims;
}

// "blk.12.attn_q.weight" -> 12; nullopt for names outside the blk.N. scheme.
std::optional<std::int64_t> layer_of(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  const char* first = name.data() + kPrefix.size();
  const char* last = name.data() + name.size();
  std::int64_t layer = 0;
  auto [ptr, ec] = std::from_chars(first, last, layer);
  if (ec != std::errc() || ptr == first || ptr == last || *ptr != '.') return std::nullopt;
  return layer;
}

// The general.architecture values the engine runs; Mistral and TinyLlama files say "llama".
constexpr std::array<std::string_view, 5> kSupportedArchitectures = {"llama", "qwen2", "qwen3",
                                                                     "gemma2", "gemma3"};

}  // namespace

bool gguf_architecture_supported(std::string_view architecture) {
  return std::ranges::find(kSupportedArchitectures, architecture) != kSupportedArchitectures.end();
}

std::string gguf_supported_architectures_text() {
  std::string text;
  for (std::size_t i = 0; i < kSupportedArchitectures.size(); ++i) {
    if (i > 0) text += i + 1 == kSupportedArchitectures.size() ? " and " : ", ";
    text += kSupportedArchitectures[i];
  }
  return text;
}

namespace {

// A Gemma file's keys over the architecture's defaults (model_spec.h), as llama.cpp reads them:
// the window's period, the sliding layers' rope base and the soft-caps when the file has them.
// A gemma2 file without a window slides over 4096 tokens (llama.cpp's default); a gemma3 file
// without one does not slide.
void read_gemma_keys(const GgufFile& f, ModelSpec& s) {
  const std::string& a = s.architecture;
  if (const auto p = f.find_int(a + ".attention.sliding_window_pattern")) {
    s.sliding_window_period = *p;
  }
  if (const auto base = f.find_float(a + ".rope.freq_base_swa")) s.rope_theta_local = *base;
  if (const auto cap = f.find_float(a + ".final_logit_softcapping")) s.final_softcap = *cap;
  if (a != "gemma2") return;
  if (!f.has(a + ".attention.sliding_window")) s.sliding_window = 4096;
  if (const auto cap = f.find_float(a + ".attn_logit_softcapping")) s.attn_softcap = *cap;
}

}  // namespace

ModelSpec gguf_model_spec(const GgufFile& f) {
  ModelSpec s;
  s.architecture = f.get_string("general.architecture");
  const std::string& a = s.architecture;
  if (!gguf_architecture_supported(a)) {
    throw_error<ModelError>("{}: general.architecture '{}' is not supported (KVScope runs {})",
                            f.path(), printable_prefix(a), gguf_supported_architectures_text());
  }
  s.name = f.find_string("general.name").value_or(std::filesystem::path(f.path()).stem().string());
  s.n_layers = meta_size(f, a + ".block_count");
  s.dim = meta_size(f, a + ".embedding_length");
  s.n_heads = meta_size(f, a + ".attention.head_count");
  s.n_kv_heads = find_meta_size(f, a + ".attention.head_count_kv").value_or(s.n_heads);
  const auto key_length = find_meta_size(f, a + ".attention.key_length");
  const auto value_length = find_meta_size(f, a + ".attention.value_length");
  if (key_length && value_length && *key_length != *value_length) {
    throw_error<ModelError>("{}: {}.attention.key_length {} != value_length {}: not supported",
                            f.path(), a, *key_length, *value_length);
  }
  s.head_dim =
      resolve_head_dim(s.dim, s.n_heads, key_length ? key_length : value_length,
                       f.path() + ": " + a + ".embedding_length", a + ".attention.head_count");
  s.rope_dim = find_meta_size(f, a + ".rope.dimension_count").value_or(s.head_dim);
  s.ffn_dim = meta_size(f, a + ".feed_forward_length");
  s.context_length = meta_size(f, a + ".context_length");
  s.rope_theta = f.find_float(a + ".rope.freq_base").value_or(10000.0);
  s.rope_scaling = read_rope_scaling(f, a);
  s.norm_eps = f.find_float(a + ".attention.layer_norm_rms_epsilon").value_or(1e-5);
  s.sliding_window = f.find_int(a + ".attention.sliding_window").value_or(0);
  s.vocab_size = read_vocab_size(f);
  // llama-architecture converters permute Q/K rows so adjacent pairs rotate; the other
  // families keep the original half-split layout.
  s.rope_pairing = a == "llama" ? RopePairing::Adjacent : RopePairing::HalfSplit;
  s.qkv_bias = a == "qwen2" || f.find_tensor("blk.0.attn_q.bias") != nullptr;
  apply_architecture_defaults(s);
  if (a == "gemma2" || a == "gemma3") read_gemma_keys(f, s);
  s.tied_embeddings = f.find_tensor("output.weight") == nullptr;
  try {
    validate(s);
  } catch (const ModelError& e) {
    throw ModelError(f.path() + ": " + e.what());
  }
  return s;
}

GgufModel::GgufModel(const std::string& path) : file_(std::make_unique<GgufFile>(path)) {
  format_ = ModelFormat::Gguf;
  path_ = path;
  spec_ = gguf_model_spec(*file_);
  check_layers();
  bind_weights();
  chat_template_ = file_->find_string("tokenizer.chat_template");
}

// Every layer below block_count must have tensors, and none may exist above it (those
// would be silently dropped: the metadata and the weights disagree).
void GgufModel::check_layers() const {
  std::set<std::int64_t> present;
  for (const auto& t : file_->tensors()) {
    const auto layer = layer_of(t.name);
    if (!layer) continue;
    if (*layer >= spec_.n_layers) {
      throw_error<ModelError>("{}: {}.block_count = {} but the file has tensor {}", path_,
                              spec_.architecture, spec_.n_layers, t.name);
    }
    present.insert(*layer);
  }
  for (std::int64_t i = 0; i < spec_.n_layers; ++i) {
    if (!present.count(i)) {
      throw_error<ModelError>("{}: {}.block_count = {} but blk.{}.* tensors are missing", path_,
                              spec_.architecture, spec_.n_layers, i);
    }
  }
}

// rows == 0 asks for a vector of `cols` values. GGUF dims run fastest first: a matrix
// of `rows` rows of `cols` values is stored with dims [cols, rows].
WeightView GgufModel::view(const std::string& name, std::int64_t rows, std::int64_t cols) const {
  const GgufTensor* t = file_->find_tensor(name);
  if (!t) {
    throw_error<ModelError>("tensor {}: not found in {} (the {} architecture needs it)", name,
                            path_, spec_.architecture);
  }
  const std::vector<std::int64_t> want =
      rows == 0 ? std::vector<std::int64_t>{cols} : std::vector<std::int64_t>{cols, rows};
  if (squeeze(t->dims) != squeeze(want)) {
    throw_error<ModelError>("tensor {}: shape [{}] but the config needs [{}]", name,
                            fmt::join(t->dims, ", "), fmt::join(want, ", "));
  }
  const auto& info = tensor_type_info(t->type);
  if (!info.supported) {
    throw_error<ModelError>("tensor {}: type {} is not supported by KVScope's kernels", name,
                            info.name);
  }
  return WeightView{name, t->type, rows == 0 ? 1 : rows, cols, t->data};
}

void GgufModel::bind_weights() {
  const ModelSpec& s = spec_;
  weights_.token_embd = view("token_embd.weight", s.vocab_size, s.dim);
  for (std::int64_t i = 0; i < s.n_layers; ++i) {
    const auto p = fmt::format("blk.{}.", i);
    LayerWeights l;
    l.attn_norm = view(p + "attn_norm.weight", 0, s.dim);
    l.wq = view(p + "attn_q.weight", s.q_dim(), s.dim);
    l.wk = view(p + "attn_k.weight", s.kv_dim(), s.dim);
    l.wv = view(p + "attn_v.weight", s.kv_dim(), s.dim);
    if (s.qkv_bias) {
      l.bq = view(p + "attn_q.bias", 0, s.q_dim());
      l.bk = view(p + "attn_k.bias", 0, s.kv_dim());
      l.bv = view(p + "attn_v.bias", 0, s.kv_dim());
    }
    if (s.qk_norm) {
      l.q_norm = view(p + "attn_q_norm.weight", 0, s.head_dim);
      l.k_norm = view(p + "attn_k_norm.weight", 0, s.head_dim);
    }
    l.wo = view(p + "attn_output.weight", s.dim, s.q_dim());
    l.ffn_norm = view(p + "ffn_norm.weight", 0, s.dim);
    l.w_gate = view(p + "ffn_gate.weight", s.ffn_dim, s.dim);
    l.w_up = view(p + "ffn_up.weight", s.ffn_dim, s.dim);
    l.w_down = view(p + "ffn_down.weight", s.dim, s.ffn_dim);
    if (s.post_norms) {
      l.post_attn_norm = view(p + "post_attention_norm.weight", 0, s.dim);
      l.post_ffn_norm = view(p + "post_ffw_norm.weight", 0, s.dim);
    }
    weights_.layers.push_back(std::move(l));
  }
  weights_.output_norm = view("output_norm.weight", 0, s.dim);
  weights_.output =
      s.tied_embeddings ? weights_.token_embd : view("output.weight", s.vocab_size, s.dim);
}

}  // namespace kvscope
