#include "model/synthetic_model.h"

#include <cmath>
#include <set>

#include "model/gguf/gguf_writer.h"
#include "model/synthetic_blocks.h"
#include "util/error.h"

namespace kvscope {

namespace {

// splitmix64: tiny, fast, and identical everywhere (std distributions are not).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  // Uniform in [-1, 1).
  float uniform() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<float>(static_cast<double>(z >> 40) / 8388608.0 - 1.0);  // 24 bits
  }

 private:
  std::uint64_t state_;
};

// Filler pieces in a plausible SentencePiece order: letters, word-initial letters,
// digits, punctuation, then letter pairs, then numbered pieces.
std::vector<std::string> filler_pieces(std::size_t n) {
  std::vector<std::string> out;
  auto push = [&](std::string s) {
    if (out.size() < n) out.push_back(std::move(s));
  };
  const std::string kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's word boundary
  push(kSpace);
  for (char c = 'a'; c <= 'z'; ++c) push(std::string(1, c));
  for (char c = 'a'; c <= 'z'; ++c) push(kSpace + c);
  for (char c = 'A'; c <= 'Z'; ++c) push(std::string(1, c));
  for (char c = 'A'; c <= 'Z'; ++c) push(kSpace + c);
  for (char c = '0'; c <= '9'; ++c) push(std::string(1, c));
  for (char c : std::string(".,!?'\"-:;()")) push(std::string(1, c));
  for (char a = 'a'; a <= 'z'; ++a) {
    for (char b = 'a'; b <= 'z'; ++b) push(std::string{a, b});
  }
  for (char a = 'a'; a <= 'z'; ++a) {
    for (char b = 'a'; b <= 'z'; ++b) push(kSpace + std::string{a, b});
  }
  for (std::size_t i = 0; out.size() < n; ++i) push("tok" + std::to_string(i));
  return out;
}

void check_vocab(const SyntheticVocab& v, std::int64_t vocab_size) {
  const auto n = static_cast<std::int64_t>(v.tokens.size());
  if (n == 0 || n > vocab_size) {
    throw_error<UsageError>("write_synthetic_gguf: vocab has {} tokens, needs 1 to vocab_size {}",
                            n, vocab_size);
  }
  if (!v.scores.empty() && v.scores.size() != v.tokens.size()) {
    throw_error<UsageError>("write_synthetic_gguf: {} scores for {} tokens", v.scores.size(), n);
  }
  if (!v.token_types.empty() && v.token_types.size() != v.tokens.size()) {
    throw_error<UsageError>("write_synthetic_gguf: {} token types for {} tokens",
                            v.token_types.size(), n);
  }
  for (auto id : {v.bos_id, v.eos_id, v.unk_id.value_or(0)}) {
    if (id < 0 || id >= n) {
      throw_error<UsageError>("write_synthetic_gguf: special token id {} outside the {} tokens", id,
                              n);
    }
  }
}

void write_vocab(GgufWriter& w, const SyntheticVocab& v) {
  w.set_string("tokenizer.ggml.model", v.model);
  w.set_string_array("tokenizer.ggml.tokens", v.tokens);
  if (!v.scores.empty()) w.set_f32_array("tokenizer.ggml.scores", v.scores);
  if (!v.token_types.empty()) w.set_i32_array("tokenizer.ggml.token_type", v.token_types);
  if (!v.merges.empty()) w.set_string_array("tokenizer.ggml.merges", v.merges);
  w.set_u32("tokenizer.ggml.bos_token_id", static_cast<std::uint32_t>(v.bos_id));
  w.set_u32("tokenizer.ggml.eos_token_id", static_cast<std::uint32_t>(v.eos_id));
  if (v.unk_id) w.set_u32("tokenizer.ggml.unknown_token_id", static_cast<std::uint32_t>(*v.unk_id));
  if (v.add_bos_token) w.set_bool("tokenizer.ggml.add_bos_token", *v.add_bos_token);
  if (v.chat_template) w.set_string("tokenizer.chat_template", *v.chat_template);
}

void write_hparams(GgufWriter& w, const ModelSpec& s, const std::string& arch) {
  auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };  // validated sizes
  w.set_string("general.architecture", arch);
  w.set_string("general.name", s.name.empty() ? "synthetic" : s.name);
  w.set_u32(arch + ".block_count", u32(s.n_layers));
  w.set_u32(arch + ".context_length", u32(s.context_length));
  w.set_u32(arch + ".embedding_length", u32(s.dim));
  w.set_u32(arch + ".feed_forward_length", u32(s.ffn_dim));
  w.set_u32(arch + ".attention.head_count", u32(s.n_heads));
  w.set_u32(arch + ".attention.head_count_kv", u32(s.n_kv_heads));
  w.set_u32(arch + ".attention.key_length", u32(s.head_dim));
  w.set_u32(arch + ".attention.value_length", u32(s.head_dim));
  w.set_u32(arch + ".rope.dimension_count", u32(s.rope_dim));
  w.set_f32(arch + ".rope.freq_base", static_cast<float>(s.rope_theta));
  w.set_f32(arch + ".attention.layer_norm_rms_epsilon", static_cast<float>(s.norm_eps));
  if (s.sliding_window > 0) w.set_u32(arch + ".attention.sliding_window", u32(s.sliding_window));
  if (arch == "gemma2" || arch == "gemma3") {  // what read_gemma_keys (gguf_model.cpp) defaults
    w.set_u32(arch + ".attention.sliding_window_pattern", u32(s.sliding_window_period));
    if (s.rope_theta_local != 0.0) {
      w.set_f32(arch + ".rope.freq_base_swa", static_cast<float>(s.rope_theta_local));
    }
    if (s.final_softcap != 0.0) {
      w.set_f32(arch + ".final_logit_softcapping", static_cast<float>(s.final_softcap));
    }
  }
  if (arch == "gemma2") {  // llama.cpp caps gemma2's scores always: the file says at what
    w.set_f32(arch + ".attn_logit_softcapping", static_cast<float>(s.attn_softcap));
  }
  const RopeScaling& rs = s.rope_scaling;
  if (rs.type == RopeScalingType::Linear || rs.type == RopeScalingType::Yarn) {
    w.set_string(arch + ".rope.scaling.type", std::string(rope_scaling_name(rs.type)));
    w.set_f32(arch + ".rope.scaling.factor", static_cast<float>(rs.factor));
    if (rs.original_context > 0) {
      w.set_u32(arch + ".rope.scaling.original_context_length", u32(rs.original_context));
    }
  } else if (rs.type != RopeScalingType::None) {
    // GGUF has no metadata for these (llama.cpp bakes llama3 into rope_freqs.weight).
    throw_error<UsageError>("write_synthetic_gguf: {} rope scaling cannot be written to GGUF",
                            rope_scaling_name(rs.type));
  }
}

}  // namespace

SyntheticVocab default_synthetic_vocab(std::int64_t vocab_size) {
  SyntheticVocab v;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.token_types = {2, 3, 3};
  if (vocab_size >= 259) {
    for (int b = 0; b < 256; ++b) {
      v.tokens.push_back(fmt::format("<0x{:02X}>", b));
      v.token_types.push_back(6);
    }
  }
  v.scores.assign(v.tokens.size(), 0.0f);
  const auto n_filler = vocab_size > static_cast<std::int64_t>(v.tokens.size())
                            ? static_cast<std::size_t>(vocab_size) - v.tokens.size()
                            : 0;
  int rank = 0;
  for (auto& piece : filler_pieces(n_filler)) {
    v.tokens.push_back(std::move(piece));
    v.token_types.push_back(1);
    v.scores.push_back(static_cast<float>(-rank++));
  }
  v.add_bos_token = true;
  return v;
}

void write_synthetic_gguf(const std::string& path, const ModelSpec& spec, TensorType weight_type,
                          std::uint64_t seed, const SyntheticVocab* vocab, SyntheticFill fill) {
  try {
    validate(spec);
  } catch (const ModelError& e) {
    throw UsageError(std::string("write_synthetic_gguf: ") + e.what());
  }
  const auto& info = tensor_type_info(weight_type);
  for (auto [field, n] : {std::pair{"dim", spec.dim},
                          {"n_heads * head_dim", spec.q_dim()},
                          {"ffn_dim", spec.ffn_dim}}) {
    if (n % info.block_elems != 0) {
      throw_error<UsageError>("write_synthetic_gguf: {} {} is not a multiple of the {} block ({})",
                              field, n, info.name, info.block_elems);
    }
  }
  const SyntheticVocab default_vocab =
      vocab ? SyntheticVocab{} : default_synthetic_vocab(spec.vocab_size);
  const SyntheticVocab& v = vocab ? *vocab : default_vocab;
  check_vocab(v, spec.vocab_size);

  const std::string& a = spec.architecture;
  const std::string arch =
      a == "qwen2" || a == "qwen3" || a == "gemma2" || a == "gemma3" ? a : "llama";
  GgufWriter w;
  write_hparams(w, spec, arch);
  write_vocab(w, v);

  Rng rng(seed);
  // [rows][cols] matrix, dims [cols, rows] as GGUF stores them.
  std::uint64_t matrix_seed = seed;
  auto matrix = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
    if (fill == SyntheticFill::Blocks) {
      if (auto blocks = random_weight_blocks(weight_type, rows, cols, scale, ++matrix_seed)) {
        w.add_tensor(name, weight_type, {cols, rows}, std::move(*blocks));
        return;
      }
    }
    std::vector<float> x(static_cast<std::size_t>(rows * cols));
    for (auto& e : x) e = rng.uniform() * scale;
    w.add_tensor_f32(name, weight_type, {cols, rows}, x);
  };
  auto vector = [&](const std::string& name, std::int64_t n, float center, float spread) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (auto& e : x) e = center + spread * rng.uniform();
    w.add_tensor_f32(name, TensorType::F32, {n}, x);
  };
  const bool bias = arch == "qwen2" || spec.qkv_bias;
  matrix("token_embd.weight", spec.vocab_size, spec.dim);
  for (std::int64_t i = 0; i < spec.n_layers; ++i) {
    const auto p = fmt::format("blk.{}.", i);
    vector(p + "attn_norm.weight", spec.dim, 1.0f, 0.1f);
    matrix(p + "attn_q.weight", spec.q_dim(), spec.dim);
    matrix(p + "attn_k.weight", spec.kv_dim(), spec.dim);
    matrix(p + "attn_v.weight", spec.kv_dim(), spec.dim);
    if (bias) {
      vector(p + "attn_q.bias", spec.q_dim(), 0.0f, 0.1f);
      vector(p + "attn_k.bias", spec.kv_dim(), 0.0f, 0.1f);
      vector(p + "attn_v.bias", spec.kv_dim(), 0.0f, 0.1f);
    }
    if (arch == "qwen3" || arch == "gemma3") {
      vector(p + "attn_q_norm.weight", spec.head_dim, 1.0f, 0.1f);
      vector(p + "attn_k_norm.weight", spec.head_dim, 1.0f, 0.1f);
    }
    matrix(p + "attn_output.weight", spec.dim, spec.q_dim());
    vector(p + "ffn_norm.weight", spec.dim, 1.0f, 0.1f);
    matrix(p + "ffn_gate.weight", spec.ffn_dim, spec.dim);
    matrix(p + "ffn_up.weight", spec.ffn_dim, spec.dim);
    matrix(p + "ffn_down.weight", spec.dim, spec.ffn_dim);
    if (arch == "gemma2" || arch == "gemma3") {
      vector(p + "post_attention_norm.weight", spec.dim, 1.0f, 0.1f);
      vector(p + "post_ffw_norm.weight", spec.dim, 1.0f, 0.1f);
    }
  }
  vector("output_norm.weight", spec.dim, 1.0f, 0.1f);
  if (!spec.tied_embeddings) matrix("output.weight", spec.vocab_size, spec.dim);
  w.write(path);
}

}  // namespace kvscope
