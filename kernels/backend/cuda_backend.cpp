#include "backend/cuda_backend.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attention/paged_attention_choice.cuh"
#include "backend/cuda_backend_state.h"
#include "backend/cuda_check.h"
#include "kv/kv_cache_observer.h"
#include "run/greedy.h"
#include "util/env.h"
#include "util/error.h"

namespace kvscope {

using namespace cuda;

namespace {

constexpr auto kWorkspace = DeviceMemoryCategory::Workspace;

// Why graphs start off ("" when they start on): the option, KVSCOPE_CUDA_SYNC=1 (a capture
// cannot synchronise) or KVSCOPE_CUDA_GRAPHS=0.
std::string graphs_off_reason(const CudaBackendOptions& o) {
  if (!o.cuda_graphs) return "turned off by the cuda_graphs option";
  if (cuda_sync_mode()) return "turned off by KVSCOPE_CUDA_SYNC=1 (every launch is checked)";
  if (const auto v = env_turns_off("KVSCOPE_CUDA_GRAPHS")) {
    return fmt::format("turned off by KVSCOPE_CUDA_GRAPHS={}", *v);
  }
  return {};
}

// Whether any projection reads quantized weights (else 8-bit codes would serve none).
bool has_quantized_projection(const DeviceModelWeights& weights) {
  const auto ps = weights.projections();
  return std::any_of(ps.begin(), ps.end(),
                     [](const DeviceWeight* w) { return is_quantized(w->type); });
}

// Everything a layer's kernels receive of its KV layout, for a graph key.
void add_layout(StepGraphKey& key, const KvLayerLayout& L) {
  key.add(static_cast<std::int64_t>(L.k_dtype)).add(static_cast<std::int64_t>(L.v_dtype));
  key.add(L.head_dim).add(L.block_size).add(L.n_kv_heads).add(L.block_bytes);
  key.add(L.k_data).add(L.k_scales).add(L.v_data).add(L.v_scales).add(L.k_offsets);
  key.add(L.k_stride).add(L.v_stride).add(L.k_n_scales).add(L.v_n_scales);
  key.add(L.k_group).add(L.v_group);
}

}  // namespace

OwnedStream::OwnedStream() {
  KVSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
}

OwnedStream::~OwnedStream() {
  if (s) cudaStreamDestroy(s);
}

CudaBackend::State::State(const Model& m, const CudaBackendOptions& o, CudaDeviceInfo device)
    : model(m),
      spec(m.spec()),
      first_layer(o.layers.begin),
      end_layer(o.layers.end_in(m.spec().n_layers)),
      whole(o.layers.whole(m.spec().n_layers)),
      info(std::move(device)),
      rope(
          rope_config(m.spec(), o.context_length > 0 ? o.context_length : m.spec().context_length)),
      alloc(o.device),
      weights(m, alloc, o.f32_weights_as_f16, o.layers) {
  const std::int64_t context = o.context_length > 0 ? o.context_length : m.spec().context_length;
  if (auto local = local_rope_config(m.spec(), context)) rope_local.emplace(*local);
  graph.emplace(stream, graphs_off_reason(o));
  max_cols = std::max({spec.dim, spec.q_dim(), spec.ffn_dim});
  q8_requested = q8_activations_on(o);
  q8_activations = q8_requested && has_quantized_projection(weights);
  if (o.gemm_min_tokens > 0) {
    gemm.emplace(alloc, stream);
    gemm_min_tokens = o.gemm_min_tokens;
    for (const DeviceWeight* w : weights.projections()) {
      gemm_slab_bytes = std::max(gemm_slab_bytes, gemm->slab_bytes(*w));
    }
  }
  ws_options.gemm_min_tokens = gemm ? gemm_min_tokens : 0;
  ws_options.q8_activations = q8_activations;
  ws_options.gemm_slab_bytes = static_cast<std::int64_t>(gemm_slab_bytes);
  ws_options.compute_major = info.compute_major;
  ws_options.sm_count = info.sm_count;
  plan_options = cuda_plan_workspace_options(o, info);
}

// Which attention kernel the layers of group g run, in words: one choice for all of them, or
// where the layers differ (an int4 layer whose offsets fall off their alignment), each
// choice with its layers.
std::string CudaBackend::State::attention_line(const KvCacheManager& kv, std::int64_t g) const {
  const std::size_t limit = info.shared_memory_per_block_optin;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> choices;
  for (std::int64_t l = 0; l < kv.layout(g).n_layers; ++l) {
    const AttentionChoice c =
        attention_choice(kv_layer_layout(kv.layout(g), l), static_cast<int>(spec.n_heads), limit,
                         attention_generic_forced(), kv.exact_tail(g) != nullptr);
    std::string text = describe_attention_choice(c, limit);
    auto it = std::find_if(choices.begin(), choices.end(),
                           [&](const auto& ch) { return ch.first == text; });
    if (it == choices.end()) it = choices.insert(choices.end(), {std::move(text), {}});
    it->second.push_back(l);
  }
  if (choices.size() == 1) return fmt::format("layer group {}: {}", g, choices.front().first);
  std::string line = fmt::format("layer group {}:", g);
  for (const auto& [text, layers] : choices) {
    line += fmt::format(" {} for its layers {};", text, fmt::join(layers, ", "));
  }
  line.pop_back();
  return line;
}

// Both ensure_* return whether they wrote device memory through the legacy stream.
bool CudaBackend::State::ensure_kv_pools(const KvCacheManager& kv) {
  bool changed = false;
  const auto n_groups = static_cast<std::size_t>(kv.n_groups());
  kv_pools.resize(n_groups);
  kv_block_bytes.resize(n_groups);
  kv_shadows.resize(n_groups);
  kv_shadow_block_bytes.resize(n_groups);
  for (std::size_t g = 0; g < n_groups; ++g) {
    const auto gi = static_cast<std::int64_t>(g);
    if (kv.bytes().has_host_storage(gi)) continue;  // a split's CPU groups, in host memory
    const std::int64_t bb = kv.layout(gi).block_bytes();
    const auto bytes = static_cast<std::size_t>(kv.pool(gi).n_blocks() * bb);
    if (kv_pools[g].size() != bytes) {
      kv_pools[g] = DeviceBuffer(alloc, bytes, DeviceMemoryCategory::KvPool, "KV block pool");
      kv_pools[g].fill_zero();
      changed = true;
    }
    kv_block_bytes[g] = bb;
    const ExactTail* tail = kv.exact_tail(gi);
    kv_shadow_block_bytes[g] = tail ? tail->layout().block_bytes() : 0;
    const auto copy_bytes =
        static_cast<std::size_t>(tail ? tail->n_shadows() * kv_shadow_block_bytes[g] : 0);
    if (copy_bytes == 0 && kv_shadows[g].get()) {
      kv_shadows[g] = DeviceBuffer();  // a later cache without a tail: no stale copies held
    } else if (copy_bytes > 0 && kv_shadows[g].size() != copy_bytes) {
      kv_shadows[g] =
          DeviceBuffer(alloc, copy_bytes, DeviceMemoryCategory::KvPool, "KV exact-tail copies");
      kv_shadows[g].fill_zero();
      changed = true;
    }
  }
  if (changed || attention_lines.size() != n_groups) {
    attention_lines.clear();
    for (std::int64_t g = 0; g < kv.n_groups(); ++g) {
      if (!kv.bytes().has_host_storage(g)) attention_lines.push_back(attention_line(kv, g));
    }
  }
  return changed;
}

// cos/sin of every position's angles, from the CPU Rope itself: the device rotates by
// exactly the reference's angles, whatever the scaling type.
bool CudaBackend::State::ensure_rope_table(std::int64_t positions) {
  if (positions <= rope_positions) return false;
  upload_rope_table(rope, positions, rope_cos, rope_sin, "");
  if (rope_local) {
    upload_rope_table(*rope_local, positions, rope_local_cos, rope_local_sin, " (sliding layers)");
  }
  rope_positions = positions;
  return true;
}

void CudaBackend::State::upload_rope_table(const Rope& r, std::int64_t positions,
                                           DeviceBuffer& cos_out, DeviceBuffer& sin_out,
                                           std::string_view which) {
  const std::int64_t half = r.n_pairs();
  std::vector<float> cos(static_cast<std::size_t>(positions * half));
  std::vector<float> sin(cos.size());
  for (std::int64_t p = 0; p < positions; ++p) {
    const auto off = static_cast<std::size_t>(p * half);
    r.angles(p, {&cos[off], static_cast<std::size_t>(half)},
             {&sin[off], static_cast<std::size_t>(half)});
  }
  const std::size_t bytes = cos.size() * sizeof(float);
  const std::string cos_name = fmt::format("RoPE cos table{}", which);
  const std::string sin_name = fmt::format("RoPE sin table{}", which);
  cos_out = DeviceBuffer(alloc, bytes, kWorkspace, cos_name.c_str());
  sin_out = DeviceBuffer(alloc, bytes, kWorkspace, sin_name.c_str());
  cos_out.upload(cos.data(), bytes);
  sin_out.upload(sin.data(), bytes);
}

void CudaBackend::State::ensure_workspace(const CudaStepShape& shape) {
  const std::vector<CudaBuffer> sizes = cuda_step_buffers(spec, ws_options, shape);
  // in cuda_step_buffers' order; the cuBLAS activations live in the ProjectionGemm
  DeviceBuffer* const buffers[] = {&x,         &xb,     &qkv,     &att,        &gate_up,
                                   &last,      &logits, &partial, &error_sums, &xq,
                                   &xq_scales, nullptr, &ints,    &picks};
  static_assert(std::size(buffers) == 14);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto bytes = static_cast<std::size_t>(sizes[i].bytes);
    if (buffers[i]) {
      buffers[i]->reserve(alloc, bytes, kWorkspace, sizes[i].what.data());
    } else if (bytes > 0) {
      gemm->reserve(shape.n_tokens, max_cols, gemm_slab_bytes);
    }
  }
}

// Everything a step's launches need before the first one: device memory (no allocation may
// happen inside a graph capture) and the step's ints, uploaded outside the graph. Returns the
// attention split count.
int CudaBackend::State::prepare_step(const StepPlan& plan, const KvCacheManager& kv, bool decode) {
  // The pools' zeroing and the RoPE tables' upload ran on the legacy stream, which does not
  // order with our non-blocking one (and a pageable cudaMemcpy may return before its DMA).
  const bool pools = ensure_kv_pools(kv);
  if (ensure_rope_table(kv.config().max_context) || pools) {
    KVSCOPE_CUDA_CHECK(cudaDeviceSynchronize());
  }
  const auto T = static_cast<int>(plan.n_tokens);
  const auto n_kv_heads = static_cast<int>(spec.n_kv_heads);
  const auto n_heads = static_cast<int>(spec.n_heads);
  const int n_splits = attention_splits(T, n_heads, n_kv_heads, plan.max_keys, info.sm_count);
  // A decode step takes room for the most splits its shape can have, so the partials buffer,
  // whose address a graph holds, stays where it is while the context grows.
  const int room = decode ? attention_splits(T, n_heads, n_kv_heads,
                                             std::numeric_limits<int>::max(), info.sm_count)
                          : n_splits;
  CudaStepShape shape;
  shape.n_tokens = plan.n_tokens;
  shape.n_rows = plan.n_rows;
  shape.n_splits = room;
  shape.n_groups = kv.n_groups();
  shape.blocks_capacity = plan.blocks_capacity;
  for (std::int64_t g = 0; g < kv.n_groups(); ++g) {
    if (kv.exact_tail(g) != nullptr) ++shape.n_tail_groups;
  }
  ensure_workspace(shape);
  const std::size_t bytes = plan.ints.size() * sizeof(int);
  if (ints.size() < bytes) {
    throw_error<Error>("CUDA step: {} bytes of step tables, {} reserved (cuda_step_table_ints)",
                       bytes, ints.size());
  }
  staging.upload(plan.ints.data(), bytes, ints.get(), stream);
  return n_splits;
}

// Every host value launch_step passes to a kernel that can differ between two steps: the
// shape, the offsets into the ints, the split count, the buffers' addresses and the KV
// layouts. The weights, the model's dimensions and the RoPE setup are fixed per backend.
StepGraphKey CudaBackend::State::step_key(const StepPlan& plan, const KvCacheManager& kv,
                                          int n_splits) const {
  StepGraphKey key;
  key.add(plan.n_tokens).add(plan.n_rows).add(n_splits);
  key.add(plan.tokens_at).add(plan.pos_at).add(plan.rows_at);
  for (std::size_t g = 0; g < plan.first_at.size(); ++g) {
    key.add(plan.first_at[g]).add(plan.table_start_at[g]).add(plan.blocks_at[g]);
    key.add(kv_pools[g].get()).add(plan.shadows_at[g]).add(kv_shadows[g].get());
  }
  for (const DeviceBuffer* b :
       {&x, &xb, &qkv, &att, &gate_up, &last, &logits, &partial, &ints, &rope_cos, &rope_sin,
        &rope_local_cos, &rope_local_sin, &error_sums, &xq, &xq_scales}) {
    key.add(b->get());
  }
  if (uses_gemm(plan.n_tokens)) key.add(gemm->activations_scratch()).add(gemm->weight_scratch());
  for (std::int64_t layer = first_layer; layer < end_layer; ++layer) {
    const std::int64_t g = kv.group_of_layer(layer);
    key.add(g);
    add_layout(key, kv_layer_layout(kv.layout(g), kv.layer_in_group(layer)));
    if (const ExactTail* tail = kv.exact_tail(g)) {
      key.add(tail->tail_blocks());
      add_layout(key, kv_layer_layout(tail->layout(), kv.layer_in_group(layer)));
    }
  }
  return key;
}

CudaBackend::CudaBackend(const Model& model, const CudaBackendOptions& options) {
  check_layer_range(model, options.layers);
  CudaDeviceInfo info = probe_cuda_device(options.device);
  if (!info.available) throw_error<Error>("CUDA unavailable: {}", info.reason);
  s_ = std::make_unique<State>(model, options, std::move(info));
}

CudaBackend::~CudaBackend() = default;

std::string CudaBackend::name() const {
  const StepGraph& g = *s_->graph;
  std::string notes;
  if (s_->health.lost()) notes += ", device lost";
  if (!s_->q8_requested) notes += ", f32 activations";
  if (!g.enabled()) notes += fmt::format(", CUDA graphs off: {}", g.off_reason());
  return fmt::format("CUDA ({}{})", s_->info.name, notes);
}

CudaWorkspaceOptions CudaBackend::workspace_options() const {
  return s_->ws_options;
}

std::vector<std::string> CudaBackend::attention_report() const {
  return s_->attention_lines;
}

CudaGraphReport CudaBackend::graph_report() const {
  const StepGraph& g = *s_->graph;
  const StepGraphStats& st = g.stats();
  return {g.enabled(), g.off_reason(), st.eager,         st.replays,
          st.captures, st.updates,     st.instantiations};
}

// Decode steps go through the step graph (replayed when their key matches), prompt chunks
// run eagerly; both launch the same kernels with the same arguments, so the logits are the
// same bits. The ints upload and the outputs' download stay outside any graph.
CudaBackend::State::StepShape CudaBackend::State::run_step(std::span<const SequenceChunk> chunks,
                                                           KvCacheManager& kv,
                                                           const std::vector<float>* hidden) {
  check_step_input(hidden != nullptr);
  KVSCOPE_CUDA_CHECK(cudaSetDevice(alloc.device()));  // the calling thread's current device
  const bool decode = is_decode_step(chunks);
  // a part before the model's end has no logits rows (step_plan.h), so no buffer for them
  const StepPlan plan =
      plan_step(chunks, kv, model.weights().token_embd.rows, kv.config().max_context,
                decode ? decode_blocks_capacity : 0, ends_model());
  if (plan.n_tokens == 0) return {};
  const int n_splits = prepare_step(plan, kv, decode);
  if (hidden) upload_hidden(*hidden, plan.n_tokens);  // outside any graph
  const auto launches = [&] { launch_step(plan, kv, n_splits); };
  if (decode) {
    decode_blocks_capacity = plan.blocks_capacity;
    graph->run(step_key(plan, kv, n_splits), launches);
  } else {
    launches();
  }
  return {plan.n_tokens, plan.n_rows};
}

// Waits for the step's downloads (queued by the caller), then records its KV error.
void CudaBackend::State::finish_step(std::int64_t n_tokens, KvCacheManager& kv) {
  error_host.resize(static_cast<std::size_t>(spec.n_layers));  // a part's others stay 0
  KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(error_host.data(), error_sums.get(),
                                     error_host.size() * sizeof(KvErrorSums),
                                     cudaMemcpyDeviceToHost, stream));
  KVSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  record_quant_error(n_tokens, kv);
}

// Every entry point runs its device work through `health`: once a sticky error has been
// seen, each step ends at once with the device-lost message (device_health.h).
void CudaBackend::forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                          std::vector<float>& logits) {
  State& s = *s_;
  s.health.run(
      [&] {
        const State::StepShape step = s.run_step(chunks, kv);
        logits.resize(static_cast<std::size_t>(step.n_rows * s.weights.output.rows));
        if (step.n_rows == 0) return;
        KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(logits.data(), s.logits.get(),
                                           logits.size() * sizeof(float), cudaMemcpyDeviceToHost,
                                           s.stream));
        s.finish_step(step.n_tokens, kv);
      },
      last_launch);
}

// The same step, then one argmax launch over the logits rows (outside any graph, so greedy
// and sampled steps share their graphs) and one int per row to the host.
void CudaBackend::forward_greedy(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                                 std::vector<TokenId>& picks) {
  static_assert(cuda::kArgmaxInvalid == kPickInvalidLogit &&
                cuda::kArgmaxAllMasked == kPickAllMasked);
  static_assert(sizeof(TokenId) == sizeof(int));
  State& s = *s_;
  s.health.run(
      [&] {
        const State::StepShape step = s.run_step(chunks, kv);
        picks.resize(static_cast<std::size_t>(step.n_rows));
        if (step.n_rows == 0) return;
        cuda::launch_argmax(s.logits.as<float>(), static_cast<int>(step.n_rows),
                            static_cast<int>(s.weights.output.rows), s.picks.as<int>(), s.stream);
        KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(picks.data(), s.picks.get(), picks.size() * sizeof(int),
                                           cudaMemcpyDeviceToHost, s.stream));
        s.finish_step(step.n_tokens, kv);
      },
      last_launch);
}

// The step's measured KV error, added to the cache observer's per-layer sums as the CPU
// backend's write_token adds it: every token wrote n_kv_heads x head_dim values per side.
void CudaBackend::State::record_quant_error(std::int64_t n_tokens, KvCacheManager& kv) const {
  KvCacheObserver* observer = kv.observer();
  if (observer == nullptr) return;
  const std::int64_t count = n_tokens * spec.kv_dim();
  for (std::int64_t layer = first_layer; layer < end_layer; ++layer) {
    const KvErrorSums& e = error_host[static_cast<std::size_t>(layer)];
    observer->record_quant_error(layer, QuantErrorSums{e.k_sq_error, e.k_sq_exact, count},
                                 QuantErrorSums{e.v_sq_error, e.v_sq_exact, count});
  }
}

// Copy-on-write copies inside a group's device pool. Before the first step the pool holds
// nothing worth copying (no token was written), so there is nothing to do.
void CudaBackend::copy_blocks(std::span<const BlockCopy> copies) {
  State& s = *s_;
  s.health.run(
      [&] {
        KVSCOPE_CUDA_CHECK(cudaSetDevice(s.alloc.device()));
        for (const BlockCopy& c : copies) {
          const auto g = static_cast<std::size_t>(c.group);
          if (g >= s.kv_pools.size() || !s.kv_pools[g].get()) continue;
          const std::int64_t bb = s.kv_block_bytes[g];
          auto* base = s.kv_pools[g].as<std::uint8_t>();
          KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(base + c.dst * bb, base + c.src * bb,
                                             static_cast<std::size_t>(bb), cudaMemcpyDeviceToDevice,
                                             s.stream));
          // the exact tail's fp16 copy goes with the block (ExactTail::copy on the host)
          if (!s.kv_shadows[g].get() || c.src_shadow < 0 || c.dst_shadow < 0) continue;
          const std::int64_t cb = s.kv_shadow_block_bytes[g];
          auto* copies_base = s.kv_shadows[g].as<std::uint8_t>();
          KVSCOPE_CUDA_CHECK(
              cudaMemcpyAsync(copies_base + c.dst_shadow * cb, copies_base + c.src_shadow * cb,
                              static_cast<std::size_t>(cb), cudaMemcpyDeviceToDevice, s.stream));
        }
      },
      last_launch);
}

MemoryInfo CudaBackend::memory_info(const KvCacheManager& kv) const {
  const State& s = *s_;
  MemoryInfo info;
  info.device = s.info.name;
  // a lost device answers no query: the counts stand, its free memory reads 0
  const DeviceMemoryStatus status =
      s.health.lost() ? DeviceMemoryStatus{s.info.total_bytes, 0} : s.alloc.query();
  info.total = status.total;
  info.weights = s.alloc.bytes(DeviceMemoryCategory::Weights);
  info.workspace = s.alloc.bytes(DeviceMemoryCategory::Workspace);
  info.kv_pool = s.alloc.bytes(DeviceMemoryCategory::KvPool);
  const std::uint64_t ours = info.weights + info.workspace + info.kv_pool;
  const std::uint64_t in_use = status.total - status.free;
  info.used_by_others = in_use > ours ? in_use - ours : 0;
  info.free = status.free;
  if (info.kv_pool == 0) {
    // before the first step the pool is not allocated yet: show what it will take
    for (std::int64_t g = 0; g < kv.n_groups(); ++g) {
      if (kv.bytes().has_host_storage(g)) continue;  // a split's CPU groups
      info.kv_pool +=
          static_cast<std::uint64_t>(kv.pool(g).n_blocks() * kv.layout(g).block_bytes());
    }
    info.kv_pool += static_cast<std::uint64_t>(kv_exact_tail_bytes(kv.config(), false));
    info.free = info.free > info.kv_pool ? info.free - info.kv_pool : 0;
  }
  return info;
}

std::optional<DeviceMemory> CudaBackend::device_memory() const {
  const State& s = *s_;
  s.health.check();
  const DeviceMemoryStatus status = s.alloc.query();
  const std::uint64_t ours = s.alloc.bytes(DeviceMemoryCategory::Weights) +
                             s.alloc.bytes(DeviceMemoryCategory::Workspace) +
                             s.alloc.bytes(DeviceMemoryCategory::KvPool);
  const std::uint64_t in_use = status.total - status.free;
  return DeviceMemory{status.total, in_use > ours ? in_use - ours : 0};
}

std::unique_ptr<Backend> make_cuda_backend(const Model& model, const CudaBackendOptions& options,
                                           std::string* why) {
  const CudaDeviceInfo info = probe_cuda_device(options.device);
  if (!info.available) {
    if (why) *why = info.reason;
    return nullptr;
  }
  if (auto reason = unsupported_weights(model)) {
    if (why) *why = *reason;
    return nullptr;
  }
  try {
    return std::make_unique<CudaBackend>(model, options);
  } catch (const std::exception& e) {  // Error, or bad_alloc converting weights on the host
    if (why) *why = e.what();
    return nullptr;
  }
}

}  // namespace kvscope
