#include "bench/attention_bench.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attention/paged_attention_choice.cuh"
#include "backend/cuda_check.h"
#include "backend/device_allocator.h"
#include "backend/kernel_launchers.h"
#include "backend/step_plan.h"
#include "run/backend.h"
#include "util/error.h"
#include "util/stats.h"

namespace kvscope::cuda {

namespace {

// A pair of events per timed call, destroyed whatever happens.
struct EventPairs {
  std::vector<cudaEvent_t> start, stop;
  explicit EventPairs(int n) {
    start.reserve(static_cast<std::size_t>(n));
    stop.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      start.push_back(nullptr);
      KVSCOPE_CUDA_CHECK(cudaEventCreate(&start.back()));
      stop.push_back(nullptr);
      KVSCOPE_CUDA_CHECK(cudaEventCreate(&stop.back()));
    }
  }
  ~EventPairs() {
    for (cudaEvent_t e : start) cudaEventDestroy(e);
    for (cudaEvent_t e : stop) cudaEventDestroy(e);
  }
  EventPairs(const EventPairs&) = delete;
  EventPairs& operator=(const EventPairs&) = delete;
};

int device_attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  KVSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

template <typename T>
DeviceBuffer upload_buffer(DeviceAllocator& alloc, std::span<const T> host,
                           DeviceMemoryCategory category, const char* what) {
  DeviceBuffer b(alloc, std::max<std::size_t>(host.size_bytes(), 1), category, what);
  b.upload(host.data(), host.size_bytes());
  return b;
}

// Everything one decode attention call reads and writes, on the device.
struct DeviceStep {
  DeviceBuffer pool, ints, q, out, partial;
  AttentionArgs args;
};

// The pool of group 0 (host storage: blocks back to back), the step's ints as the backend
// packs them for one decode token at `seq`'s last position, the query and the outputs.
DeviceStep upload_step(DeviceAllocator& alloc, const KvCacheManager& kv, SeqId seq, int n_heads,
                       std::span<const float> q, int sm_count) {
  const KvBlockLayout& L = kv.layout(0);
  DeviceStep d;
  const auto pool_bytes = static_cast<std::size_t>(kv.pool(0).n_blocks() * L.block_bytes());
  d.pool = DeviceBuffer(alloc, pool_bytes, DeviceMemoryCategory::KvPool, "KV pool");
  d.pool.upload(kv.bytes().block_data(0, 0), pool_bytes);
  const std::vector<TokenId> ids = {0};
  const SequenceChunk chunk{seq, ids, kv.n_tokens(seq) - 1, false};
  const StepPlan plan = plan_step({&chunk, 1}, kv, 1, kv.config().max_context);
  d.ints = upload_buffer(alloc, std::span<const int>(plan.ints), DeviceMemoryCategory::Workspace,
                         "step tables");
  d.q = upload_buffer(alloc, q, DeviceMemoryCategory::Workspace, "query");
  d.out = DeviceBuffer(alloc, q.size_bytes(), DeviceMemoryCategory::Workspace, "attention output");

  AttentionArgs& a = d.args;
  a.n_tokens = 1;
  a.n_heads = n_heads;
  a.n_splits =
      attention_splits(1, n_heads, static_cast<int>(L.n_kv_heads), plan.max_keys, sm_count);
  a.scale = 1.0f / std::sqrt(static_cast<float>(L.head_dim));
  a.layout = kv_layer_layout(L, 0);
  const int* base = d.ints.as<const int>();
  a.tables.pos = base + plan.pos_at;
  a.tables.first = base + plan.first_at[0];
  a.tables.table_start = base + plan.table_start_at[0];
  a.tables.blocks = base + plan.blocks_at[0];
  a.tables.pool = d.pool.as<std::uint8_t>();
  const auto partial_floats = static_cast<std::size_t>(
      attention_partial_floats(1, n_heads, static_cast<int>(L.head_dim), a.n_splits));
  d.partial = DeviceBuffer(alloc, std::max<std::size_t>(partial_floats * sizeof(float), 1),
                           DeviceMemoryCategory::Workspace, "attention split partials");
  return d;
}

// One warm-up call of `kernel`, then `repetitions` calls each after a memset of `flush`;
// microseconds of each call by its events.
std::vector<double> time_calls(AttentionKernel kernel, DeviceStep& d, DeviceBuffer& flush,
                               int repetitions) {
  cudaStream_t stream = nullptr;  // the legacy default stream: memsets and events in order
  auto launch = [&] {
    launch_paged_attention_with(kernel, d.args, d.q.as<float>(), d.partial.as<float>(),
                                d.out.as<float>(), stream);
  };
  launch();
  EventPairs ev(repetitions);
  for (std::size_t r = 0; r < ev.start.size(); ++r) {
    // The memset keeps the GPU busy while the host enqueues the events and the launch, so
    // the events time the kernel, not the host's launch latency.
    KVSCOPE_CUDA_CHECK(
        cudaMemsetAsync(flush.get(), static_cast<int>(r & 0xff), flush.size(), stream));
    KVSCOPE_CUDA_CHECK(cudaEventRecord(ev.start[r], stream));
    launch();
    KVSCOPE_CUDA_CHECK(cudaEventRecord(ev.stop[r], stream));
  }
  KVSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> us;
  for (std::size_t r = 0; r < ev.start.size(); ++r) {
    float ms = 0.0f;
    KVSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start[r], ev.stop[r]));
    us.push_back(1e3 * static_cast<double>(ms));
  }
  return us;
}

// Times `kernel` and downloads its last output.
AttentionKernelTiming time_kernel(AttentionKernel kernel, DeviceStep& d, DeviceBuffer& flush,
                                  int repetitions, std::int64_t bytes_read,
                                  std::vector<float>& out) {
  AttentionKernelTiming k;
  k.name = attention_kernel_name(kernel);
  k.samples_us = time_calls(kernel, d, flush, repetitions);
  k.median_us = median(k.samples_us);
  k.achieved_gb_s = k.median_us > 0 ? static_cast<double>(bytes_read) / k.median_us / 1e3 : 0.0;
  d.out.download(out.data(), out.size() * sizeof(float));
  return k;
}

}  // namespace

DeviceAttentionTiming time_device_paged_attention(const KvCacheManager& kv, SeqId seq, int n_heads,
                                                  std::span<const float> q, int repetitions,
                                                  int device) {
  const KvBlockLayout& L = kv.layout(0);
  if (q.size() != static_cast<std::size_t>(n_heads * L.head_dim)) {
    throw_error<UsageError>("device attention bench: q has {} floats, want {} heads x {}", q.size(),
                            n_heads, L.head_dim);
  }
  DeviceAllocator alloc(device);
  DeviceStep step = upload_step(alloc, kv, seq, n_heads, q,
                                device_attribute(cudaDevAttrMultiProcessorCount, device));
  DeviceAttentionTiming t;
  t.n_splits = step.args.n_splits;
  t.l2_flush_bytes =
      2 * std::max<std::int64_t>(device_attribute(cudaDevAttrL2CacheSize, device), 1 << 20);
  t.bytes_read = kv.block_table(seq, 0).n_held() * L.layer_bytes();
  DeviceBuffer flush(alloc, static_cast<std::size_t>(t.l2_flush_bytes),
                     DeviceMemoryCategory::Workspace, "L2 flush");
  const float* dq = step.q.as<float>();
  const AttentionKernel chosen = chosen_attention_kernel(step.args, dq);
  const char* why = fast_attention_unsupported(step.args, dq);
  t.kernel = attention_kernel_name(chosen);
  t.fast_unsupported = why ? why : "";
  t.out.resize(q.size());
  t.kernels.push_back(time_kernel(chosen, step, flush, repetitions, t.bytes_read, t.out));
  t.samples_us = t.kernels.front().samples_us;
  const AttentionKernel other =
      chosen == AttentionKernel::Fast ? AttentionKernel::Generic : AttentionKernel::Fast;
  if (other == AttentionKernel::Generic || why == nullptr) {
    std::vector<float> out(q.size());
    AttentionKernelTiming k = time_kernel(other, step, flush, repetitions, t.bytes_read, out);
    for (std::size_t i = 0; i < out.size(); ++i) {
      k.max_abs_diff_vs_chosen =
          std::max(k.max_abs_diff_vs_chosen, static_cast<double>(std::fabs(out[i] - t.out[i])));
    }
    t.kernels.push_back(std::move(k));
  }
  return t;
}

std::string describe_kernel_timings(const DeviceAttentionTiming& t, double copy_gb_s) {
  std::string text;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const AttentionKernelTiming& k = t.kernels[i];
    const double fraction = copy_gb_s > 0 ? k.achieved_gb_s / copy_gb_s : 0.0;
    text +=
        fmt::format("{:<8} {:>9.1f} us {:>8.0f} GB/s {:>5.0f}% of copy  {}\n", k.name, k.median_us,
                    k.achieved_gb_s, 100.0 * fraction,
                    i == 0 ? std::string("(chosen)")
                           : fmt::format("max |diff| vs chosen {:.2g}", k.max_abs_diff_vs_chosen));
  }
  if (!t.fast_unsupported.empty()) text += "fast kernel unsupported: " + t.fast_unsupported + "\n";
  return text;
}

}  // namespace kvscope::cuda
