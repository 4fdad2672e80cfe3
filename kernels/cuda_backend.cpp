#include "cuda_backend.h"

#include <cmath>

#include <fmt/format.h>

#include "cuda_check.h"
#include "cuda_device.h"
#include "device_allocator.h"
#include "device_weights.h"
#include "kernel_launchers.h"
#include "run/rope.h"
#include "step_plan.h"
#include "util/error.h"

namespace kvscope {

using namespace cuda;

namespace {

constexpr auto kWorkspace = DeviceMemoryCategory::Workspace;

// Device pointer `at` ints into the step's packed int buffer.
const int* at(const DeviceBuffer& ints, std::int64_t offset) {
  return ints.as<const int>() + offset;
}

}  // namespace

// Everything the backend holds on the device, and the stream its steps run on.
struct CudaBackend::State {
  const Model& model;
  const ModelSpec& spec;
  CudaDeviceInfo info;
  Rope rope;
  DeviceAllocator alloc;
  cudaStream_t stream = nullptr;
  DeviceModelWeights weights;

  std::vector<DeviceBuffer> kv_pools;        // [n_groups] [n_blocks][block_bytes]
  std::vector<std::int64_t> kv_block_bytes;  // [n_groups]
  DeviceBuffer rope_cos, rope_sin;           // [max_positions][rope_dim / 2]
  std::int64_t rope_positions = 0;

  // Activations of one step, grown to the largest step seen.
  DeviceBuffer x, xb, q, k, v, att, proj, gate, up, last, logits, partial, ints;

  State(const Model& m, const CudaBackendOptions& o, CudaDeviceInfo device)
      : model(m),
        spec(m.spec()),
        info(std::move(device)),
        rope(rope_config(m.spec(),
                         o.context_length > 0 ? o.context_length : m.spec().context_length)),
        alloc(o.device),
        weights(m, alloc, o.f32_weights_as_f16) {
    KVSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  ~State() {
    if (stream) cudaStreamDestroy(stream);
  }

  void ensure_kv_pools(const KvCacheManager& kv);
  void ensure_rope_table(std::int64_t positions);
  void ensure_workspace(std::int64_t n_tokens, std::int64_t n_rows, std::int64_t partial_floats);
  void attention_block(std::int64_t layer, const StepPlan& plan, const KvCacheManager& kv,
                       int n_splits);
  void ffn_block(std::int64_t layer, int n_tokens);
};

void CudaBackend::State::ensure_kv_pools(const KvCacheManager& kv) {
  const auto n_groups = static_cast<std::size_t>(kv.n_groups());
  kv_pools.resize(n_groups);
  kv_block_bytes.resize(n_groups);
  for (std::size_t g = 0; g < n_groups; ++g) {
    const auto gi = static_cast<std::int64_t>(g);
    const std::int64_t bb = kv.layout(gi).block_bytes();
    const auto bytes = static_cast<std::size_t>(kv.pool(gi).n_blocks() * bb);
    if (kv_pools[g].size() != bytes) {
      kv_pools[g] = DeviceBuffer(alloc, bytes, DeviceMemoryCategory::KvPool, "KV block pool");
      kv_pools[g].fill_zero();
    }
    kv_block_bytes[g] = bb;
  }
}

// cos/sin of every position's angles, from the CPU Rope itself: the device rotates by
// exactly the reference's angles, whatever the scaling type.
void CudaBackend::State::ensure_rope_table(std::int64_t positions) {
  if (positions <= rope_positions) return;
  const std::int64_t half = rope.n_pairs();
  std::vector<float> cos(static_cast<std::size_t>(positions * half));
  std::vector<float> sin(cos.size());
  for (std::int64_t p = 0; p < positions; ++p) {
    const auto off = static_cast<std::size_t>(p * half);
    rope.angles(p, {&cos[off], static_cast<std::size_t>(half)},
                {&sin[off], static_cast<std::size_t>(half)});
  }
  const std::size_t bytes = cos.size() * sizeof(float);
  rope_cos = DeviceBuffer(alloc, bytes, kWorkspace, "RoPE cos table");
  rope_sin = DeviceBuffer(alloc, bytes, kWorkspace, "RoPE sin table");
  rope_cos.upload(cos.data(), bytes);
  rope_sin.upload(sin.data(), bytes);
  rope_positions = positions;
}

void CudaBackend::State::ensure_workspace(std::int64_t n_tokens, std::int64_t n_rows,
                                          std::int64_t partial_floats) {
  auto fit = [&](DeviceBuffer& b, std::int64_t floats, const char* what) {
    b.reserve(alloc, static_cast<std::size_t>(floats) * sizeof(float), kWorkspace, what);
  };
  fit(x, n_tokens * spec.dim, "activations x");
  fit(xb, n_tokens * spec.dim, "activations xb");
  fit(q, n_tokens * spec.q_dim(), "activations q");
  fit(k, n_tokens * spec.kv_dim(), "activations k");
  fit(v, n_tokens * spec.kv_dim(), "activations v");
  fit(att, n_tokens * spec.q_dim(), "attention output");
  fit(proj, n_tokens * spec.dim, "projection output");
  fit(gate, n_tokens * spec.ffn_dim, "ffn gate");
  fit(up, n_tokens * spec.ffn_dim, "ffn up");
  fit(last, n_rows * spec.dim, "final hidden states");
  fit(logits, n_rows * weights.output.rows, "logits");
  fit(partial, std::max<std::int64_t>(partial_floats, 1), "attention split partials");
}

// x += wo · attention(rope(wq·norm(x)), cache ∪ rope(wk·norm(x)), cache ∪ wv·norm(x))
void CudaBackend::State::attention_block(std::int64_t layer, const StepPlan& plan,
                                         const KvCacheManager& kv, int n_splits) {
  const DeviceLayerWeights& w = weights.layers[static_cast<std::size_t>(layer)];
  const auto T = static_cast<int>(plan.n_tokens);
  const int dim = static_cast<int>(spec.dim);
  launch_rmsnorm(x.as<float>(), nullptr, w.attn_norm, T, dim, static_cast<float>(spec.norm_eps),
                 xb.as<float>(), stream);
  launch_matvec(w.wq, xb.as<float>(), T, q.as<float>(), stream);
  launch_matvec(w.wk, xb.as<float>(), T, k.as<float>(), stream);
  launch_matvec(w.wv, xb.as<float>(), T, v.as<float>(), stream);
  if (w.bq) launch_add_bias(q.as<float>(), w.bq, T, static_cast<int>(spec.q_dim()), stream);
  if (w.bk) launch_add_bias(k.as<float>(), w.bk, T, static_cast<int>(spec.kv_dim()), stream);
  if (w.bv) launch_add_bias(v.as<float>(), w.bv, T, static_cast<int>(spec.kv_dim()), stream);

  RopeArgs ra;
  ra.n_tokens = T;
  ra.n_heads = static_cast<int>(spec.n_heads);
  ra.n_kv_heads = static_cast<int>(spec.n_kv_heads);
  ra.head_dim = static_cast<int>(spec.head_dim);
  ra.rope_dim = static_cast<int>(rope.config().rope_dim);
  ra.adjacent = rope.config().pairing == RopePairing::Adjacent;
  ra.pos = at(ints, plan.pos_at);
  ra.cos = rope_cos.as<const float>();
  ra.sin = rope_sin.as<const float>();
  launch_rope(ra, q.as<float>(), k.as<float>(), stream);

  const std::int64_t g = kv.group_of_layer(layer);
  const auto gi = static_cast<std::size_t>(g);
  KvStepTables tables;
  tables.pos = at(ints, plan.pos_at);
  tables.first = at(ints, plan.first_at[gi]);
  tables.table_start = at(ints, plan.table_start_at[gi]);
  tables.blocks = at(ints, plan.blocks_at[gi]);
  tables.pool = kv_pools[gi].as<std::uint8_t>();
  const KvLayerLayout layout = kv_layer_layout(kv.layout(g), kv.layer_in_group(layer));
  launch_kv_append(layout, tables, k.as<float>(), v.as<float>(), T, stream);

  AttentionArgs aa;
  aa.n_tokens = T;
  aa.n_heads = static_cast<int>(spec.n_heads);
  aa.n_splits = n_splits;
  aa.scale = 1.0f / std::sqrt(static_cast<float>(spec.head_dim));
  aa.layout = layout;
  aa.tables = tables;
  launch_paged_attention(aa, q.as<float>(), partial.as<float>(), att.as<float>(), stream);
  launch_matvec(w.wo, att.as<float>(), T, proj.as<float>(), stream);
  launch_add_in_place(x.as<float>(), proj.as<float>(), plan.n_tokens * spec.dim, stream);
}

// x += w_down · (silu(w_gate · norm(x)) * (w_up · norm(x)))
void CudaBackend::State::ffn_block(std::int64_t layer, int n_tokens) {
  const DeviceLayerWeights& w = weights.layers[static_cast<std::size_t>(layer)];
  const std::int64_t n_ffn = n_tokens * spec.ffn_dim;
  launch_rmsnorm(x.as<float>(), nullptr, w.ffn_norm, n_tokens, static_cast<int>(spec.dim),
                 static_cast<float>(spec.norm_eps), xb.as<float>(), stream);
  launch_matvec(w.w_gate, xb.as<float>(), n_tokens, gate.as<float>(), stream);
  launch_matvec(w.w_up, xb.as<float>(), n_tokens, up.as<float>(), stream);
  launch_swiglu(gate.as<float>(), up.as<float>(), gate.as<float>(), n_ffn, stream);
  launch_matvec(w.w_down, gate.as<float>(), n_tokens, proj.as<float>(), stream);
  launch_add_in_place(x.as<float>(), proj.as<float>(), n_tokens * spec.dim, stream);
}

CudaBackend::CudaBackend(const Model& model, const CudaBackendOptions& options) {
  CudaDeviceInfo info = probe_cuda_device(options.device);
  if (!info.available) throw_error<Error>("CUDA unavailable: {}", info.reason);
  s_ = std::make_unique<State>(model, options, std::move(info));
}

CudaBackend::~CudaBackend() = default;

std::string CudaBackend::name() const {
  return fmt::format("CUDA ({})", s_->info.name);
}

void CudaBackend::forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                          std::vector<float>& logits) {
  State& s = *s_;
  const StepPlan plan = plan_step(chunks, kv, s.weights.token_embd.rows, kv.config().max_context);
  if (plan.n_tokens == 0) {
    logits.clear();
    return;
  }
  s.ensure_kv_pools(kv);
  s.ensure_rope_table(kv.config().max_context);
  const auto T = static_cast<int>(plan.n_tokens);
  const int n_splits =
      attention_splits(T, static_cast<int>(s.spec.n_kv_heads), plan.max_keys, s.info.sm_count);
  s.ensure_workspace(plan.n_tokens, plan.n_rows,
                     attention_partial_floats(T, static_cast<int>(s.spec.n_heads),
                                              static_cast<int>(s.spec.head_dim), n_splits));
  s.ints.reserve(s.alloc, plan.ints.size() * sizeof(int), kWorkspace, "step tables");
  KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(s.ints.get(), plan.ints.data(), plan.ints.size() * sizeof(int),
                                     cudaMemcpyHostToDevice, s.stream));

  launch_embedding(s.weights.token_embd, at(s.ints, plan.tokens_at), T, s.x.as<float>(), s.stream);
  for (std::int64_t layer = 0; layer < s.spec.n_layers; ++layer) {
    s.attention_block(layer, plan, kv, n_splits);
    s.ffn_block(layer, T);
  }
  // logits = output · norm(x) for the rows the chunks ask for
  const auto R = static_cast<int>(plan.n_rows);
  launch_rmsnorm(s.x.as<float>(), at(s.ints, plan.rows_at), s.weights.output_norm, R,
                 static_cast<int>(s.spec.dim), static_cast<float>(s.spec.norm_eps),
                 s.last.as<float>(), s.stream);
  launch_matvec(s.weights.output, s.last.as<float>(), R, s.logits.as<float>(), s.stream);
  logits.resize(static_cast<std::size_t>(plan.n_rows * s.weights.output.rows));
  KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(logits.data(), s.logits.get(), logits.size() * sizeof(float),
                                     cudaMemcpyDeviceToHost, s.stream));
  KVSCOPE_CUDA_CHECK(cudaStreamSynchronize(s.stream));
}

// Copy-on-write copies inside a group's device pool. Before the first step the pool holds
// nothing worth copying (no token was written), so there is nothing to do.
void CudaBackend::copy_blocks(std::span<const BlockCopy> copies) {
  State& s = *s_;
  for (const BlockCopy& c : copies) {
    const auto g = static_cast<std::size_t>(c.group);
    if (g >= s.kv_pools.size() || !s.kv_pools[g].get()) continue;
    const std::int64_t bb = s.kv_block_bytes[g];
    auto* base = s.kv_pools[g].as<std::uint8_t>();
    KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(base + c.dst * bb, base + c.src * bb,
                                       static_cast<std::size_t>(bb), cudaMemcpyDeviceToDevice,
                                       s.stream));
  }
}

MemoryInfo CudaBackend::memory_info(const KvCacheManager& kv) const {
  const State& s = *s_;
  MemoryInfo info;
  info.device = s.info.name;
  const DeviceMemoryStatus status = s.alloc.query();
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
      info.kv_pool +=
          static_cast<std::uint64_t>(kv.pool(g).n_blocks() * kv.layout(g).block_bytes());
    }
    info.free = info.free > info.kv_pool ? info.free - info.kv_pool : 0;
  }
  return info;
}

std::optional<DeviceMemory> CudaBackend::device_memory() const {
  const State& s = *s_;
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
  } catch (const Error& e) {
    if (why) *why = e.what();
    return nullptr;
  }
}

}  // namespace kvscope
