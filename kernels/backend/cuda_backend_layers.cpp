// The kernels of one CUDA step, in stream order: embedding, per layer attention and FFN
// blocks, the final norm and the logits rows. The same launches run eagerly (prompt chunks)
// or inside a graph capture (decode steps), so nothing here may allocate or synchronise:
// prepare_step has reserved every buffer before.
#include <cmath>

#include "backend/cuda_backend_state.h"
#include "backend/cuda_check.h"
#include "kv/format/kv_rotation.h"

namespace kvscope {

using namespace cuda;

namespace {

// Device pointer `at` ints into the step's packed int buffer.
const int* at(const DeviceBuffer& ints, std::int64_t offset) {
  return ints.as<const int>() + offset;
}

}  // namespace

bool CudaBackend::State::uses_q8(const DeviceWeight& w, int n_tokens) const {
  return q8_activations && !uses_gemm(n_tokens) && is_quantized(w.type);
}

Q8Codes CudaBackend::State::codes_for(std::initializer_list<const DeviceWeight*> ws, int n_tokens) {
  for (const DeviceWeight* w : ws) {
    if (w->data && uses_q8(*w, n_tokens)) return {xq.as<std::int8_t>(), xq_scales.as<float>()};
  }
  return {};
}

void CudaBackend::State::project(const float* in, int n_tokens,
                                 std::initializer_list<Projection> outs, bool codes_ready) {
  bool q8 = false;
  for (const Projection& p : outs) q8 |= uses_q8(*p.w, n_tokens);
  if (q8 && !codes_ready) {  // every projection here reads the same input: one set of codes
    launch_quantize_q8(in, n_tokens * outs.begin()->w->cols, xq.as<std::int8_t>(),
                       xq_scales.as<float>(), stream);
  }
  for (const Projection& p : outs) {
    if (uses_gemm(n_tokens)) {
      gemm->run(*p.w, in, n_tokens, p.y, p.accumulate);
    } else if (uses_q8(*p.w, n_tokens)) {
      launch_matvec_q8(*p.w, xq.as<std::int8_t>(), xq_scales.as<float>(), n_tokens, p.y, stream,
                       p.accumulate);
    } else {
      launch_matvec(*p.w, in, n_tokens, p.y, stream, p.accumulate);
    }
  }
}

void CudaBackend::State::launch_step(const StepPlan& plan, const KvCacheManager& kv, int n_splits) {
  const auto T = static_cast<int>(plan.n_tokens);
  KVSCOPE_CUDA_CHECK(cudaMemsetAsync(error_sums.get(), 0, error_sums.size(), stream));
  if (whole) {  // a split's part finds its input in x (run_step uploaded it)
    launch_embedding(weights.token_embd, at(ints, plan.tokens_at), T, x.as<float>(), stream);
    if (spec.embedding_scale != 1.0) {  // Gemma: sqrt(dim), a float as the CPU multiplies
      launch_scale(x.as<float>(), static_cast<float>(spec.embedding_scale), T * spec.dim, stream);
    }
  }
  for (std::int64_t layer = first_layer; layer < end_layer; ++layer) {
    attention_block(layer, plan, kv, n_splits);
    ffn_block(layer, T);
  }
  if (!ends_model()) return;  // the next part takes x
  // logits = output · norm(x) for the rows the chunks ask for
  const auto R = static_cast<int>(plan.n_rows);
  const Q8Codes codes = codes_for({&weights.output}, R);
  launch_rmsnorm(x.as<float>(), at(ints, plan.rows_at), weights.output_norm, R,
                 static_cast<int>(spec.dim), static_cast<float>(spec.norm_eps), last.as<float>(),
                 stream, codes);
  project(last.as<float>(), R, {{&weights.output, logits.as<float>()}}, codes.q != nullptr);
  if (spec.final_softcap != 0.0) {  // Gemma 2: logits = cap * tanh(logits / cap)
    launch_soft_cap(logits.as<float>(), static_cast<float>(spec.final_softcap), R * spec.vocab_size,
                    stream);
  }
}

// A sub-layer's output y [T][dim] onto the residual stream: x += y, or x += norm(y) with the
// model's post-norm (Gemma). y is xb, free once the sub-layer's projections have read it.
void CudaBackend::State::add_sublayer(const float* post_norm, int n_tokens) {
  const int dim = static_cast<int>(spec.dim);
  if (post_norm) {
    launch_rmsnorm(xb.as<float>(), nullptr, post_norm, n_tokens, dim,
                   static_cast<float>(spec.norm_eps), xb.as<float>(), stream);
  }
  launch_add_in_place(x.as<float>(), xb.as<float>(), static_cast<std::int64_t>(n_tokens) * dim,
                      stream);
}

// x += wo · attention(rope(wq·norm(x)), cache ∪ rope(wk·norm(x)), cache ∪ wv·norm(x)), with
// q and k normalised per head before RoPE and the output normalised where the model says.
void CudaBackend::State::attention_block(std::int64_t layer, const StepPlan& plan,
                                         const KvCacheManager& kv, int n_splits) {
  const DeviceLayerWeights& w = weights.layers[static_cast<std::size_t>(layer)];
  const auto T = static_cast<int>(plan.n_tokens);
  const int dim = static_cast<int>(spec.dim);
  const bool stacked = T == 1 && w.wqkv.data;  // [q | k | v] in one launch
  const Q8Codes codes = stacked ? codes_for({&w.wqkv}, T) : codes_for({&w.wq, &w.wk, &w.wv}, T);
  launch_rmsnorm(x.as<float>(), nullptr, w.attn_norm, T, dim, static_cast<float>(spec.norm_eps),
                 xb.as<float>(), stream, codes);
  float* q = qkv.as<float>();
  float* k = q + static_cast<std::int64_t>(T) * spec.q_dim();
  float* v = k + static_cast<std::int64_t>(T) * spec.kv_dim();
  if (stacked) {
    project(xb.as<float>(), 1, {{&w.wqkv, q}}, codes.q != nullptr);
  } else {
    project(xb.as<float>(), T, {{&w.wq, q}, {&w.wk, k}, {&w.wv, v}}, codes.q != nullptr);
  }
  if (w.bq) launch_add_bias(q, w.bq, T, static_cast<int>(spec.q_dim()), stream);
  if (w.bk) launch_add_bias(k, w.bk, T, static_cast<int>(spec.kv_dim()), stream);
  if (w.bv) launch_add_bias(v, w.bv, T, static_cast<int>(spec.kv_dim()), stream);

  const int hd = static_cast<int>(spec.head_dim);
  if (w.q_norm) {  // per head over head_dim, before RoPE (Qwen 3, Gemma 3)
    const auto eps = static_cast<float>(spec.norm_eps);
    launch_rmsnorm(q, nullptr, w.q_norm, T * static_cast<int>(spec.n_heads), hd, eps, q, stream);
    launch_rmsnorm(k, nullptr, w.k_norm, T * static_cast<int>(spec.n_kv_heads), hd, eps, k, stream);
  }

  // the sliding layers' own RoPE where the model turns them differently (Gemma 3)
  const bool local = rope_local && spec.layer_slides(layer);
  const Rope& r = local ? *rope_local : rope;
  RopeArgs ra;
  ra.n_tokens = T;
  ra.n_heads = static_cast<int>(spec.n_heads);
  ra.n_kv_heads = static_cast<int>(spec.n_kv_heads);
  ra.head_dim = static_cast<int>(spec.head_dim);
  ra.rope_dim = static_cast<int>(r.config().rope_dim);
  ra.adjacent = r.config().pairing == RopePairing::Adjacent;
  ra.pos = at(ints, plan.pos_at);
  ra.cos = (local ? rope_local_cos : rope_cos).as<const float>();
  ra.sin = (local ? rope_local_sin : rope_sin).as<const float>();
  launch_rope(ra, q, k, stream);

  // int4 sides into the Hadamard basis (kv_rotation.h): q and k are adjacent rows of qkv
  const std::int64_t g = kv.group_of_layer(layer);
  const bool turn_k = kv_rotated(KvSide::K, kv.layout(g).k_dtype);
  const bool turn_v = kv_rotated(KvSide::V, kv.layout(g).v_dtype);
  if (turn_k) launch_hadamard_rows(q, T * (spec.n_heads + spec.n_kv_heads), hd, stream);
  if (turn_v) launch_hadamard_rows(v, T * spec.n_kv_heads, hd, stream);

  const auto gi = static_cast<std::size_t>(g);
  KvStepTables tables;
  tables.pos = at(ints, plan.pos_at);
  tables.first = at(ints, plan.first_at[gi]);
  tables.table_start = at(ints, plan.table_start_at[gi]);
  tables.blocks = at(ints, plan.blocks_at[gi]);
  tables.pool = kv_pools[gi].as<std::uint8_t>();
  if (const ExactTail* tail = kv.exact_tail(g)) {
    tables.tail.shadows = at(ints, plan.shadows_at[gi]);
    tables.tail.pool = kv_shadows[gi].as<std::uint8_t>();
    tables.tail.layout = kv_layer_layout(tail->layout(), kv.layer_in_group(layer));
    tables.tail.tail_blocks = static_cast<int>(tail->tail_blocks());
  }
  const KvLayerLayout layout = kv_layer_layout(kv.layout(g), kv.layer_in_group(layer));
  launch_kv_append(layout, tables, k, v, T, stream, error_sums.as<KvErrorSums>() + layer);

  AttentionArgs aa;
  aa.n_tokens = T;
  aa.n_heads = static_cast<int>(spec.n_heads);
  aa.n_splits = n_splits;
  aa.scale = static_cast<float>(spec.score_scale());   // 1 / sqrt(head_dim) unless the model's own
  aa.softcap = static_cast<float>(spec.attn_softcap);  // Gemma 2; 0: none
  aa.layout = layout;
  aa.tables = tables;
  launch_paged_attention(aa, q, partial.as<float>(), att.as<float>(), stream);
  if (turn_v) launch_hadamard_rows(att.as<float>(), T * spec.n_heads, hd, stream);
  if (w.post_attn_norm) {
    project(att.as<float>(), T, {{&w.wo, xb.as<float>()}});
    add_sublayer(w.post_attn_norm, T);
  } else {
    project(att.as<float>(), T, {{&w.wo, x.as<float>(), /*accumulate=*/true}});
  }
}

// x += w_down · (act(w_gate · norm(x)) * (w_up · norm(x))), act = silu or gelu_tanh; with
// post-norms x += norm(that).
void CudaBackend::State::ffn_block(std::int64_t layer, int n_tokens) {
  const DeviceLayerWeights& w = weights.layers[static_cast<std::size_t>(layer)];
  const std::int64_t n_ffn = n_tokens * spec.ffn_dim;
  const bool stacked = n_tokens == 1 && w.w_gate_up.data;  // [gate | up] in one launch
  const Q8Codes codes =
      stacked ? codes_for({&w.w_gate_up}, n_tokens) : codes_for({&w.w_gate, &w.w_up}, n_tokens);
  launch_rmsnorm(x.as<float>(), nullptr, w.ffn_norm, n_tokens, static_cast<int>(spec.dim),
                 static_cast<float>(spec.norm_eps), xb.as<float>(), stream, codes);
  float* gate = gate_up.as<float>();
  float* up = gate + n_ffn;
  if (stacked) {
    project(xb.as<float>(), 1, {{&w.w_gate_up, gate}}, codes.q != nullptr);
  } else {
    project(xb.as<float>(), n_tokens, {{&w.w_gate, gate}, {&w.w_up, up}}, codes.q != nullptr);
  }
  const Q8Codes down_codes = codes_for({&w.w_down}, n_tokens);
  if (spec.ffn_activation == FfnActivation::GeluTanh) {
    launch_geglu(gate, up, gate, n_ffn, stream, down_codes);
  } else {
    launch_swiglu(gate, up, gate, n_ffn, stream, down_codes);
  }
  if (w.post_ffn_norm) {
    project(gate, n_tokens, {{&w.w_down, xb.as<float>()}}, down_codes.q != nullptr);
    add_sublayer(w.post_ffn_norm, n_tokens);
  } else {
    project(gate, n_tokens, {{&w.w_down, x.as<float>(), /*accumulate=*/true}},
            down_codes.q != nullptr);
  }
}

}  // namespace kvscope
