#include "run/cpu_backend.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cpu/attention/paged_attention.h"
#include "cpu/cpu_ops.h"
#include "cpu/ggml_compat.h"
#include "kv/format/kv_rotation.h"
#include "util/env.h"
#include "util/error.h"
#include "util/host_memory.h"
#include "util/mapped_file.h"

namespace kvscope {

namespace {

std::span<float> rows(std::vector<float>& v, std::int64_t n_rows, std::int64_t width) {
  return {v.data(), static_cast<std::size_t>(n_rows * width)};
}

// Rows [begin, end) of a [T][width] buffer.
std::span<float> row_range(std::vector<float>& v, std::int64_t begin, std::int64_t end,
                           std::int64_t width) {
  return {v.data() + begin * width, static_cast<std::size_t>((end - begin) * width)};
}

// Tokens per share of the element-wise work (norms, RoPE, SwiGLU): a decode step's single
// token runs inline, a prompt's tokens are split over the threads.
constexpr std::int64_t kTokensPerShare = 4;
// Logits per share of the final soft-cap (a tanh each): a 256k vocabulary in a few shares.
constexpr std::int64_t kSoftCapShare = 16384;

std::optional<Rope> local_rope(const ModelSpec& spec, std::int64_t context_length) {
  if (auto config = local_rope_config(spec, context_length)) return Rope(std::move(*config));
  return std::nullopt;
}

}  // namespace

void CpuBackend::Scratch::resize(const ModelSpec& spec, std::int64_t n_tokens) {
  auto fit = [&](std::vector<float>& buf, std::int64_t width) {
    const auto need = static_cast<std::size_t>(n_tokens * width);
    if (buf.size() < need) buf.resize(need);
  };
  fit(x, spec.dim);
  fit(xb, spec.dim);
  fit(q, spec.q_dim());
  fit(k, spec.kv_dim());
  fit(v, spec.kv_dim());
  fit(att, spec.q_dim());
  fit(proj, spec.dim);
  fit(gate, spec.ffn_dim);
  fit(up, spec.ffn_dim);
  fit(rope_cos, spec.rope_dim / 2);
  fit(rope_sin, spec.rope_dim / 2);
}

std::uint64_t CpuBackend::Scratch::bytes() const {
  std::uint64_t n = 0;
  for (const auto* b :
       {&x, &xb, &q, &k, &v, &att, &proj, &gate, &up, &rope_cos, &rope_sin, &last}) {
    n += b->capacity() * sizeof(float);
  }
  return n;
}

CpuBackend::CpuBackend(const Model& model, const CpuBackendOptions& options)
    : model_(model),
      spec_(model.spec()),
      first_layer_(options.layers.begin),
      end_layer_(options.layers.end_in(model.spec().n_layers)),
      pool_(options.n_threads > 0 ? options.n_threads : ThreadPool::default_threads()),
      matmul_(options.q8_activations),
      rope_(rope_config(model.spec(), options.context_length > 0 ? options.context_length
                                                                 : model.spec().context_length)),
      rope_local_(local_rope(model.spec(), options.context_length > 0
                                               ? options.context_length
                                               : model.spec().context_length)),
      memory_total_(options.memory_total),
      llama_cpp_batch_order_(options.llama_cpp_batch_order),
      two_plane_output_(options.two_plane_output),
      layer_output_(options.layer_output) {
  if (first_layer_ < 0 || first_layer_ >= end_layer_ || end_layer_ > spec_.n_layers) {
    throw_error<UsageError>("CPU backend: layers [{}, {}) outside the model's [0, {})",
                            first_layer_, end_layer_, spec_.n_layers);
  }
  if (options.interleave_weights && matmul_.quantized_activations() &&
      !env_turns_off("KVSCOPE_CPU_INTERLEAVE")) {
    interleave_weights(options.cancelled);
  }
}

void CpuBackend::interleave_weights(const std::function<bool()>& cancelled) {
  auto copy = [this](const WeightView& w) -> std::unique_ptr<InterleavedMatrix> {
    if (!w || !can_interleave(w.type) || w.cols % tensor_type_info(w.type).block_elems != 0) {
      return nullptr;
    }
    auto m = std::make_unique<InterleavedMatrix>(w);
    // a group block is the 8 rows' blocks re-laid, byte for byte as large (Q4_K's 3% larger,
    // interleaved.h): those extra bytes and the padding rows of a short last group add to what
    // the file's pages held
    grouped_padding_bytes_ += m->bytes() - static_cast<std::uint64_t>(w.rows * w.row_bytes());
    // the original rows are not read again (embedding lookups fault in the few they need)
    advise_pages_unneeded(w.data, static_cast<std::size_t>(w.rows * w.row_bytes()));
    return m;
  };
  grouped_.resize(model_.weights().layers.size());
  for (std::int64_t layer = first_layer_; layer < end_layer_; ++layer) {
    if (cancelled && cancelled()) throw CancelledError("loading the model was cancelled");
    const LayerWeights& w = model_.weights().layers[static_cast<std::size_t>(layer)];
    grouped_[static_cast<std::size_t>(layer)] = {copy(w.wq),    copy(w.wk),     copy(w.wv),
                                                 copy(w.wo),    copy(w.w_gate), copy(w.w_up),
                                                 copy(w.w_down)};
  }
  if (ends_model()) grouped_output_ = copy(model_.weights().output);
}

std::string CpuBackend::name() const {
  if (!matmul_.quantized_activations()) {
    return fmt::format("CPU ({} threads, f32 activations)", pool_.size());
  }
  return fmt::format("CPU ({} threads)", pool_.size());
}

void CpuBackend::forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                         std::vector<float>& logits) {
  if (first_layer_ != 0 || !ends_model()) {
    throw_error<UsageError>(
        "CPU backend for layers [{}, {}): a part of the model takes a hidden "
        "state (forward_layers), not tokens",
        first_layer_, end_layer_);
  }
  const std::int64_t n_tokens = begin_step(chunks);
  if (n_tokens == 0) {
    logits.clear();
    return;
  }
  embed_rows(chunks, scratch_.x.data());
  run_layers(chunks, n_tokens, kv);
  compute_logits(chunks, logits);
}

void CpuBackend::forward_layers(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                                std::vector<float>& hidden, std::vector<float>& logits) {
  const std::int64_t n_tokens = begin_step(chunks);
  if (n_tokens == 0) {
    logits.clear();
    return;
  }
  const auto size = static_cast<std::size_t>(n_tokens * spec_.dim);
  if (hidden.size() != size) {
    throw_error<UsageError>("CPU backend: a hidden state of {} floats for {} tokens of width {}",
                            hidden.size(), n_tokens, spec_.dim);
  }
  std::copy(hidden.begin(), hidden.end(), scratch_.x.begin());
  run_layers(chunks, n_tokens, kv);
  if (ends_model()) {
    compute_logits(chunks, logits);
  } else {
    std::copy_n(scratch_.x.begin(), size, hidden.begin());
  }
}

std::int64_t CpuBackend::begin_step(std::span<const SequenceChunk> chunks) {
  std::int64_t n_tokens = 0;
  for (const auto& c : chunks) n_tokens += static_cast<std::int64_t>(c.tokens.size());
  if (n_tokens == 0) return 0;
  scratch_.resize(spec_, n_tokens);
  // llama.cpp evaluates a prompt as one batch (sgemm order); its last layer's FFN and output
  // head see only the rows that need logits: one row (decode order) when generating.
  scratch_.sgemm.clear();
  scratch_.sgemm_out.clear();
  for (const auto& c : chunks) {
    // CpuBackendOptions::llama_cpp_batch_order says why.
    const bool batch = llama_cpp_batch_order_ && c.start_pos < c.n_prompt && c.n_prompt >= 2;
    const bool batch_out = c.all_logits && c.tokens.size() >= 2;
    scratch_.sgemm.insert(scratch_.sgemm.end(), c.tokens.size(), batch ? 1 : 0);
    scratch_.sgemm_out.insert(scratch_.sgemm_out.end(), c.tokens.size(), batch_out ? 1 : 0);
  }
  scratch_.pos.clear();
  for (const auto& c : chunks) {
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(c.tokens.size()); ++i) {
      scratch_.pos.push_back(c.start_pos + i);
    }
  }
  return n_tokens;
}

void CpuBackend::run_layers(std::span<const SequenceChunk> chunks, std::int64_t n_tokens,
                            KvCacheManager& kv) {
  for (std::int64_t layer = first_layer_; layer < end_layer_; ++layer) {
    attention_block(layer, chunks, n_tokens, kv);
    ffn_block(layer, n_tokens);
    if (layer_output_) layer_output_(layer, rows(scratch_.x, n_tokens, spec_.dim));
  }
}

void CpuBackend::embed_tokens(std::span<const SequenceChunk> chunks,
                              std::vector<float>& hidden) const {
  std::size_t n_tokens = 0;
  for (const auto& c : chunks) n_tokens += c.tokens.size();
  hidden.resize(n_tokens * static_cast<std::size_t>(spec_.dim));
  embed_rows(chunks, hidden.data());
}

// x[t] = token_embd[token t]
void CpuBackend::embed_rows(std::span<const SequenceChunk> chunks, float* x) const {
  const WeightView& emb = model_.weights().token_embd;
  std::int64_t t = 0;
  for (const auto& c : chunks) {
    for (TokenId id : c.tokens) {
      if (id < 0 || id >= emb.rows) {
        throw_error<UsageError>("token id {} outside the vocabulary (size {})", id, emb.rows);
      }
      dequantize_row(emb.type, emb.row(id), &x[t * spec_.dim], spec_.dim);
      ++t;
    }
  }
  if (spec_.embedding_scale != 1.0) {  // Gemma: sqrt(dim), a float as llama.cpp multiplies
    const auto scale = static_cast<float>(spec_.embedding_scale);
    for (float& v : std::span<float>(x, static_cast<std::size_t>(t * spec_.dim))) v *= scale;
  }
}

// x += wo · attention(rope(wq·norm(x)), cache ∪ rope(wk·norm(x)), cache ∪ wv·norm(x))
void CpuBackend::attention_block(std::int64_t layer, std::span<const SequenceChunk> chunks,
                                 std::int64_t n_tokens, KvCacheManager& kv) {
  const LayerWeights& w = model_.weights().layers[layer];
  const std::int64_t dim = spec_.dim, q_dim = spec_.q_dim(), kv_dim = spec_.kv_dim();
  const auto eps = static_cast<float>(spec_.norm_eps);
  norm_rows(w.attn_norm, eps, n_tokens);
  matmul_.set_input(rows(scratch_.xb, n_tokens, dim), dim);
  const GroupedLayer* g = grouped_.empty() ? nullptr : &grouped_[layer];
  matmul_.project(pool_, w.wq, rows(scratch_.q, n_tokens, q_dim), scratch_.sgemm,
                  g ? g->wq.get() : nullptr);
  matmul_.project(pool_, w.wk, rows(scratch_.k, n_tokens, kv_dim), scratch_.sgemm,
                  g ? g->wk.get() : nullptr);
  matmul_.project(pool_, w.wv, rows(scratch_.v, n_tokens, kv_dim), scratch_.sgemm,
                  g ? g->wv.get() : nullptr);
  if (w.bq) add_bias(rows(scratch_.q, n_tokens, q_dim), w.bq);
  if (w.bk) add_bias(rows(scratch_.k, n_tokens, kv_dim), w.bk);
  if (w.bv) add_bias(rows(scratch_.v, n_tokens, kv_dim), w.bv);
  if (spec_.qk_norm) norm_heads(w, eps, n_tokens);

  // RoPE token by token (each its own row of angles), then int4 sides into the Hadamard
  // basis (kv_rotation.h), then the cache writes in order
  const auto half = spec_.rope_dim / 2;
  const KvBlockLayout& layout = kv.layout(kv.group_of_layer(layer));
  const bool turn_k = kv_rotated(KvSide::K, layout.k_dtype);
  const bool turn_v = kv_rotated(KvSide::V, layout.v_dtype);
  const std::int64_t hd = spec_.head_dim;
  const Rope& rope = rope_of(layer);
  const float q_scale = query_scale();
  pool_.parallel_for(
      n_tokens,
      [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t t = begin; t < end; ++t) {
          std::span<float> cos(&scratch_.rope_cos[t * half], static_cast<std::size_t>(half));
          std::span<float> sin(&scratch_.rope_sin[t * half], static_cast<std::size_t>(half));
          const std::span<float> q{&scratch_.q[t * q_dim], static_cast<std::size_t>(q_dim)};
          rope.angles(scratch_.pos[t], cos, sin);
          rope.rotate(q, cos, sin);
          rope.rotate({&scratch_.k[t * kv_dim], static_cast<std::size_t>(kv_dim)}, cos, sin);
          if (q_scale != 1.0f) {
            for (float& v : q) v *= q_scale;
          }
          if (turn_k) {
            kv_rotate_rows(&scratch_.q[t * q_dim], spec_.n_heads, hd);
            kv_rotate_rows(&scratch_.k[t * kv_dim], spec_.n_kv_heads, hd);
          }
          if (turn_v) kv_rotate_rows(&scratch_.v[t * kv_dim], spec_.n_kv_heads, hd);
        }
      },
      kTokensPerShare);
  std::int64_t t = 0;
  for (const auto& c : chunks) {
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(c.tokens.size()); ++i, ++t) {
      kv.bytes().write_token(c.seq, layer, c.start_pos + i, &scratch_.k[t * kv_dim],
                             &scratch_.v[t * kv_dim], true);
    }
  }
  const AttentionShape shape{spec_.n_heads, spec_.n_kv_heads, spec_.head_dim,
                             static_cast<float>(spec_.attn_softcap)};
  t = 0;
  for (const auto& c : chunks) {
    const auto n = static_cast<std::int64_t>(c.tokens.size());
    const auto span_len = static_cast<std::size_t>(n * q_dim);
    paged_attention(pool_, kv, c.seq, layer, shape, c.start_pos, n,
                    {&scratch_.q[t * q_dim], span_len}, {&scratch_.att[t * q_dim], span_len},
                    attention_math());
    t += n;
  }
  if (turn_v) {  // the output back from the Hadamard basis of the values
    pool_.parallel_for(
        n_tokens,
        [&](std::int64_t begin, std::int64_t end) {
          kv_rotate_rows(&scratch_.att[begin * q_dim], (end - begin) * spec_.n_heads, hd);
        },
        kTokensPerShare);
  }
  matmul_.set_input(rows(scratch_.att, n_tokens, q_dim), q_dim);
  matmul_.project(pool_, w.wo, rows(scratch_.proj, n_tokens, dim), scratch_.sgemm,
                  g ? g->wo.get() : nullptr);
  if (w.post_attn_norm) norm_output(w.post_attn_norm, eps, n_tokens);
  add_in_place(rows(scratch_.x, n_tokens, dim), rows(scratch_.proj, n_tokens, dim));
}

// q and k of every head normalised over head_dim (Qwen 3, Gemma 3), before RoPE:
// q [T][n_heads][head_dim] with w.q_norm, k [T][n_kv_heads][head_dim] with w.k_norm.
void CpuBackend::norm_heads(const LayerWeights& w, float eps, std::int64_t n_tokens) {
  const std::int64_t q_dim = spec_.q_dim(), kv_dim = spec_.kv_dim();
  pool_.parallel_for(
      n_tokens,
      [&](std::int64_t begin, std::int64_t end) {
        const auto q = row_range(scratch_.q, begin, end, q_dim);
        const auto k = row_range(scratch_.k, begin, end, kv_dim);
        rmsnorm(q, w.q_norm, eps, q);
        rmsnorm(k, w.k_norm, eps, k);
      },
      kTokensPerShare);
}

// proj = rmsnorm(proj) * weight: a sub-layer's output before the residual add (Gemma).
void CpuBackend::norm_output(const WeightView& weight, float eps, std::int64_t n_tokens) {
  const std::int64_t dim = spec_.dim;
  pool_.parallel_for(
      n_tokens,
      [&](std::int64_t begin, std::int64_t end) {
        const auto p = row_range(scratch_.proj, begin, end, dim);
        rmsnorm(p, weight, eps, p);
      },
      kTokensPerShare);
}

// The RoPE of a layer: the sliding layers' own where the model turns them differently.
const Rope& CpuBackend::rope_of(std::int64_t layer) const {
  return rope_local_ && spec_.layer_slides(layer) ? *rope_local_ : rope_;
}

// What q is multiplied by so that the attention's 1 / sqrt(head_dim) becomes the model's
// score scale (1 unless the model sets its own, as Gemma 3 27B's query_pre_attn_scalar).
float CpuBackend::query_scale() const {
  return static_cast<float>(spec_.score_scale() * std::sqrt(static_cast<double>(spec_.head_dim)));
}

// xb = rmsnorm(x) * weight, rows split over the threads (a row's arithmetic is its own).
void CpuBackend::norm_rows(const WeightView& weight, float eps, std::int64_t n_tokens) {
  const std::int64_t dim = spec_.dim;
  pool_.parallel_for(
      n_tokens,
      [&](std::int64_t begin, std::int64_t end) {
        rmsnorm(row_range(scratch_.x, begin, end, dim), weight, eps,
                row_range(scratch_.xb, begin, end, dim));
      },
      kTokensPerShare);
}

// x += w_down · (silu(w_gate · norm(x)) * (w_up · norm(x)))
void CpuBackend::ffn_block(std::int64_t layer, std::int64_t n_tokens) {
  const LayerWeights& w = model_.weights().layers[layer];
  const std::int64_t dim = spec_.dim, ffn = spec_.ffn_dim;
  norm_rows(w.ffn_norm, static_cast<float>(spec_.norm_eps), n_tokens);
  const std::span<const std::uint8_t> order =
      layer == spec_.n_layers - 1 ? std::span<const std::uint8_t>(scratch_.sgemm_out)
                                  : scratch_.sgemm;
  matmul_.set_input(rows(scratch_.xb, n_tokens, dim), dim);
  const GroupedLayer* g = grouped_.empty() ? nullptr : &grouped_[layer];
  matmul_.project(pool_, w.w_gate, rows(scratch_.gate, n_tokens, ffn), order,
                  g ? g->w_gate.get() : nullptr);
  matmul_.project(pool_, w.w_up, rows(scratch_.up, n_tokens, ffn), order,
                  g ? g->w_up.get() : nullptr);
  pool_.parallel_for(
      n_tokens,
      [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t t = begin; t < end; ++t) {  // ggml's silu lanes restart at every row
          float* gate = &scratch_.gate[t * ffn];
          if (spec_.ffn_activation == FfnActivation::GeluTanh) {
            geglu_row(gate, &scratch_.up[t * ffn], gate, ffn);
          } else {
            ggml_swiglu_row(gate, &scratch_.up[t * ffn], gate, ffn);
          }
        }
      },
      kTokensPerShare);
  matmul_.set_input(rows(scratch_.gate, n_tokens, ffn), ffn);
  matmul_.project(pool_, w.w_down, rows(scratch_.proj, n_tokens, dim), order,
                  g ? g->w_down.get() : nullptr);
  if (w.post_ffn_norm) norm_output(w.post_ffn_norm, static_cast<float>(spec_.norm_eps), n_tokens);
  add_in_place(rows(scratch_.x, n_tokens, dim), rows(scratch_.proj, n_tokens, dim));
}

// logits = output · norm(x) for the rows the chunks ask for
void CpuBackend::compute_logits(std::span<const SequenceChunk> chunks, std::vector<float>& logits) {
  const std::int64_t dim = spec_.dim;
  std::int64_t n_rows = 0, t = 0;
  for (const auto& c : chunks)
    n_rows += c.all_logits ? static_cast<std::int64_t>(c.tokens.size()) : 1;
  scratch_.last.resize(static_cast<std::size_t>(n_rows * dim));
  std::int64_t r = 0;
  std::vector<std::uint8_t> order;  // [n_rows]
  for (const auto& c : chunks) {
    const auto n = static_cast<std::int64_t>(c.tokens.size());
    const std::int64_t first = c.all_logits ? t : t + n - 1;
    for (std::int64_t i = first; i < t + n; ++i, ++r) {
      std::copy_n(&scratch_.x[i * dim], dim, &scratch_.last[r * dim]);
      order.push_back(scratch_.sgemm_out[i]);
    }
    t += n;
  }
  rmsnorm(scratch_.last, model_.weights().output_norm, static_cast<float>(spec_.norm_eps),
          scratch_.last);
  logits.resize(static_cast<std::size_t>(n_rows * model_.weights().output.rows));
  matmul_.set_input(scratch_.last, dim);
  if (two_plane_output_) {
    matmul_.project_two_planes(pool_, model_.weights().output, logits, order,
                               grouped_output_.get());
  } else {
    matmul_.project(pool_, model_.weights().output, logits, order, grouped_output_.get());
  }
  if (spec_.final_softcap != 0.0) {  // Gemma 2: logits = cap * tanh(logits / cap)
    const auto cap = static_cast<float>(spec_.final_softcap);
    const auto n = static_cast<std::int64_t>(logits.size());
    pool_.parallel_for(
        n,
        [&](std::int64_t begin, std::int64_t end) {
          soft_cap({logits.data() + begin, static_cast<std::size_t>(end - begin)}, cap);
        },
        kSoftCapShare);
  }
}

std::string CpuBackend::kernels() const {
  return fmt::format("{} kernels, {}", cpu_isa_name(matmul_.isa()),
                     matmul_.quantized_activations()
                         ? "8-bit activations for quantized weights"
                         : "f32 activations, llama.cpp's attention order");
}

MemoryInfo CpuBackend::memory_info(const KvCacheManager& kv) const {
  MemoryInfo info;
  info.device = name();
  info.total = memory_total_ > 0 ? memory_total_ : host_memory_bytes();
  // a split's CPU side: its layers, the embedding table it reads and the output head
  info.weights = first_layer_ == 0 && ends_model()
                     ? model_.weight_bytes()
                     : model_.weight_bytes(first_layer_, end_layer_, true, ends_model());
  for (std::int64_t g = 0; g < kv.n_groups(); ++g) {
    if (!kv.bytes().has_host_storage(g)) continue;  // a split's GPU groups (device memory)
    info.kv_pool += static_cast<std::uint64_t>(kv.pool(g).n_blocks() * kv.layout(g).block_bytes());
  }
  // the fp16 copies of its groups' exact tails (a split's GPU groups hold theirs in VRAM)
  info.kv_pool += static_cast<std::uint64_t>(kv_exact_tail_bytes(kv.config(), true));
  // The 8-row-group copies stand in for the mapped pages of the weights they re-lay (those are
  // given back to the OS), so they count as weights; their padding rows (and Q4_K's larger
  // layout) as workspace.
  info.workspace = scratch_.bytes() + matmul_.scratch_bytes() + grouped_padding_bytes_;
  const std::uint64_t used = info.weights + info.kv_pool + info.workspace;
  info.free = info.total > used ? info.total - used : 0;
  return info;
}

}  // namespace kvscope
