// `kvscope-cli bench-attention`: the decoder's paged attention alone, for one layer, one
// sequence and one query token (decode) at each context and KV dtype, with K and V in a
// paged pool whose block table is shuffled. Reports the median microseconds per call, the
// bytes a call reads (every visible block's K and V bytes of the layer, scales and offsets
// included: kv_bytes_per_block_per_layer, the cache's one size function), the GB/s that
// makes, which fraction of the measured copy bandwidth (read + written, as `bench` counts
// it) that is, and each dtype's speed-up over f16 at the same context. The query and the
// output (a few KB) are not counted. Caches are flushed before every timed call, so K and V
// come from memory as in a decode step, where the other layers' weights pass in between.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/arg_parser.h"
#include "cli/attention_bench_cpu.h"
#include "cli/command.h"
#include "cli/copy_bandwidth.h"
#include "cpu/attention/paged_attention.h"
#include "cpu/thread_pool.h"
#include "util/error.h"
#include "util/stats.h"

#ifdef KVSCOPE_HAVE_CUDA
#include "backend/cuda_device.h"
#include "bench/attention_bench.h"
#include "bench/device_copy_bandwidth.h"
#endif

namespace kvscope::cli {

namespace {

constexpr std::uint32_t kQuerySeed = 77;

struct BenchOptions {
  bool cuda = false;
  std::vector<std::int64_t> contexts;
  std::vector<KvDtype> dtypes;
  AttentionBenchShape shape;
  int repetitions = 20;
  int threads = 1;
  AttentionMath math = AttentionMath::Float;  // CPU: what the engine runs by default
};

// One attention kernel's median on a (dtype, context) layout (CUDA).
struct KernelRow {
  std::string name;
  double median_us = 0;
  double max_abs_diff_vs_chosen = 0;
};

// One (dtype, context) measurement.
struct Row {
  KvDtype dtype = KvDtype::F16;
  std::int64_t context = 0;
  std::int64_t blocks = 0;
  std::int64_t out_of_order = 0;
  std::int64_t block_bytes_per_layer = 0;
  std::vector<double> samples_us;
  double us_per_call = 0;
  bool output_finite = true;
  std::int64_t cache_flush_bytes = 0;         // evicted before every timed call
  int n_splits = 0;                           // CUDA only
  std::optional<double> max_abs_diff_vs_cpu;  // CUDA only
  std::string kernel;                         // CUDA only: the kernel the decoder runs
  std::string fast_unsupported;               // CUDA only: why the fast kernel cannot run
  // CUDA only: every kernel that can run the layout, the chosen one first
  std::vector<KernelRow> kernels;
  std::optional<double> speedup_vs_f16;

  std::int64_t bytes_read() const { return blocks * block_bytes_per_layer; }
  double achieved_gb_s() const { return static_cast<double>(bytes_read()) / us_per_call / 1e3; }
};

int int_option(const ArgParser& p, const char* name, std::int64_t fallback, std::int64_t max) {
  return static_cast<int>(p.get_int(name, fallback, 1, max));
}

BenchOptions parse_options(const ArgParser& p) {
  BenchOptions o;
  const std::string backend = p.get_or("--backend", "cpu");
  if (backend != "cpu" && backend != "cuda") {
    throw_error<UsageError>("option --backend: '{}' is not cpu or cuda", backend);
  }
  o.cuda = backend == "cuda";
  o.contexts = p.get_int_list("--contexts", "1024,4096,16384,65536", 1, std::int64_t{1} << 24);
  for (const std::string& s : split_commas(p.get_or("--dtypes", "f16,int8,int4"))) {
    o.dtypes.push_back(parse_kv_dtype(s));
  }
  o.shape.n_heads = int_option(p, "--heads", 32, 1 << 12);
  o.shape.n_kv_heads = int_option(p, "--kv-heads", 8, 1 << 12);
  o.shape.head_dim = int_option(p, "--head-dim", 128, 1 << 12);
  o.shape.block_size = int_option(p, "--block-size", 16, 1 << 12);
  if (o.shape.n_heads % o.shape.n_kv_heads != 0) {
    throw_error<UsageError>("--heads {} is not a multiple of --kv-heads {}", o.shape.n_heads,
                            o.shape.n_kv_heads);
  }
  o.repetitions = int_option(p, "-r", 20, 100000);
  o.threads = int_option(p, "-t", ThreadPool::default_threads(), ThreadPool::kMaxThreads);
  if (p.has("--ggml-order")) o.math = AttentionMath::GgmlOrder;
  return o;
}

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// The cache, its description, and the CPU result of the decode query (the CPU's timing,
// or the reference the CUDA result is compared with).
struct Measured {
  Row row;
  std::vector<float> cpu_out;  // [n_heads][head_dim]
};

Measured measure(const BenchOptions& o, KvDtype dtype, std::int64_t context, ThreadPool& pool,
                 HostCacheFlusher* flusher) {
  const KvCacheManager kv = make_shuffled_bench_cache(
      o.shape, dtype, context, static_cast<std::uint32_t>(context * 2654435761u));
  const std::vector<float> q = random_bench_query(o.shape, kQuerySeed);
  Measured m;
  Row& r = m.row;
  r.dtype = dtype;
  r.context = context;
  r.blocks = kv.block_table(kBenchSeq, 0).n_held();
  r.out_of_order = out_of_order_blocks(kv.block_table(kBenchSeq, 0));
  r.block_bytes_per_layer = kv_bytes_per_block_per_layer(dtype, dtype, o.shape.n_kv_heads,
                                                         o.shape.head_dim, o.shape.block_size);
  m.cpu_out.resize(q.size());
  if (!o.cuda) {
    r.samples_us =
        time_cpu_paged_attention(pool, kv, o.shape, q, o.repetitions, *flusher, m.cpu_out, o.math);
    r.output_finite = all_finite(m.cpu_out);
    r.cache_flush_bytes = flusher->bytes();
    return m;
  }
#ifdef KVSCOPE_HAVE_CUDA
  const cuda::DeviceAttentionTiming t = cuda::time_device_paged_attention(
      kv, kBenchSeq, static_cast<int>(o.shape.n_heads), q, o.repetitions);
  r.samples_us = t.samples_us;
  r.n_splits = t.n_splits;
  r.cache_flush_bytes = t.l2_flush_bytes;
  r.output_finite = all_finite(t.out);
  paged_attention(pool, kv, kBenchSeq, 0, {o.shape.n_heads, o.shape.n_kv_heads, o.shape.head_dim},
                  context - 1, 1, q, m.cpu_out);
  double diff = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(t.out[i] - m.cpu_out[i])));
  }
  r.max_abs_diff_vs_cpu = diff;
  r.kernel = t.kernel;
  r.fast_unsupported = t.fast_unsupported;
  for (const cuda::AttentionKernelTiming& k : t.kernels) {
    r.kernels.push_back({k.name, k.median_us, k.max_abs_diff_vs_chosen});
  }
#endif
  return m;
}

// The device the run measures, and its copy bandwidth; a one-line error without CUDA.
struct Target {
  std::string device;
  double copy_gb_s = 0;
};

Target prepare_target(const BenchOptions& o) {
  if (!o.cuda) {
    return {fmt::format("CPU, {} thread{}", o.threads, o.threads == 1 ? "" : "s"),
            measure_host_copy_bandwidth(o.threads)};
  }
#ifdef KVSCOPE_HAVE_CUDA
  const CudaDeviceInfo info = probe_cuda_device();
  if (!info.available) throw_error<Error>("CUDA unavailable: {}", info.reason);
  return {info.name, measure_device_copy_bandwidth()};
#else
  throw_error<Error>(
      "CUDA unavailable: this build has no CUDA backend (no CUDA toolkit at build "
      "time)");
#endif
}

void add_speedups(std::vector<Row>& rows) {
  for (Row& r : rows) {
    for (const Row& f : rows) {
      if (f.dtype == KvDtype::F16 && f.context == r.context) {
        r.speedup_vs_f16 = f.us_per_call / r.us_per_call;
      }
    }
  }
}

nlohmann::json to_json(const BenchOptions& o, const Target& t, const std::vector<Row>& rows) {
  nlohmann::json out = {{"backend", o.cuda ? "cuda" : "cpu"}, {"device", t.device},
                        {"n_heads", o.shape.n_heads},         {"n_kv_heads", o.shape.n_kv_heads},
                        {"head_dim", o.shape.head_dim},       {"block_size", o.shape.block_size},
                        {"repetitions", o.repetitions},       {"copy_bandwidth_gb_s", t.copy_gb_s},
                        {"results", nlohmann::json::array()}};
  if (!o.cuda) out["threads"] = o.threads;
  for (const Row& r : rows) {
    nlohmann::json j = {{"dtype", kv_dtype_name(r.dtype)},
                        {"context", r.context},
                        {"blocks", r.blocks},
                        {"out_of_order_blocks", r.out_of_order},
                        {"block_bytes_per_layer", r.block_bytes_per_layer},
                        {"bytes_read", r.bytes_read()},
                        {"us_per_call", r.us_per_call},
                        {"samples_us", r.samples_us},
                        {"achieved_gb_s", r.achieved_gb_s()},
                        {"bandwidth_fraction", r.achieved_gb_s() / t.copy_gb_s},
                        {"output_finite", r.output_finite},
                        {"cache_flush_bytes", r.cache_flush_bytes}};
    j["speedup_vs_f16"] = r.speedup_vs_f16 ? nlohmann::json(*r.speedup_vs_f16) : nullptr;
    if (o.cuda) {
      j["n_splits"] = r.n_splits;
      j["max_abs_diff_vs_cpu"] = r.max_abs_diff_vs_cpu.value_or(0.0);
      j["kernel"] = r.kernel;
      if (!r.fast_unsupported.empty()) j["fast_unsupported"] = r.fast_unsupported;
      j["kernels"] = nlohmann::json::array();
      for (const KernelRow& k : r.kernels) {
        const double gb_s = static_cast<double>(r.bytes_read()) / k.median_us / 1e3;
        j["kernels"].push_back({{"name", k.name},
                                {"us_per_call", k.median_us},
                                {"achieved_gb_s", gb_s},
                                {"bandwidth_fraction", gb_s / t.copy_gb_s},
                                {"max_abs_diff_vs_chosen", k.max_abs_diff_vs_chosen}});
      }
    }
    out["results"].push_back(std::move(j));
  }
  return out;
}

void print_table(const BenchOptions& o, const Target& t, const std::vector<Row>& rows) {
  fmt::print(
      "paged decode attention, one layer: {} heads, {} KV heads, head_dim {}, blocks of {}, "
      "shuffled block table\n",
      o.shape.n_heads, o.shape.n_kv_heads, o.shape.head_dim, o.shape.block_size);
  fmt::print("{} | copy bandwidth {:.1f} GB/s (read + written) | median of {}, caches flushed\n",
             t.device, t.copy_gb_s, o.repetitions);
  fmt::print("{:<6} {:>8} {:>11} {:>10} {:>9} {:>8} {:>8}{}\n", "dtype", "context", "us/call",
             "MB read", "GB/s", "of copy", "vs f16", o.cuda ? "  kernel" : "");
  for (const Row& r : rows) {
    const std::string speedup =
        r.speedup_vs_f16 ? fmt::format("{:.2f}x", *r.speedup_vs_f16) : std::string("-");
    fmt::print(
        "{:<6} {:>8} {:>11.1f} {:>10.2f} {:>9.1f} {:>7.0f}% {:>8}{}{}\n", kv_dtype_name(r.dtype),
        r.context, r.us_per_call, static_cast<double>(r.bytes_read()) / 1e6, r.achieved_gb_s(),
        100.0 * r.achieved_gb_s() / t.copy_gb_s, speedup, r.kernel.empty() ? "" : "  " + r.kernel,
        r.output_finite ? "" : "  (output not finite)");
    for (std::size_t i = 1; i < r.kernels.size(); ++i) {  // the kernels not chosen
      const KernelRow& k = r.kernels[i];
      const double gb_s = static_cast<double>(r.bytes_read()) / k.median_us / 1e3;
      fmt::print("{:<6} {:>8} {:>11.1f} {:>10} {:>9.1f} {:>7.0f}% {:>8}  {} (not chosen)\n", "", "",
                 k.median_us, "", gb_s, 100.0 * gb_s / t.copy_gb_s, "", k.name);
    }
  }
}

}  // namespace

int cmd_bench_attention(const Args& args) {
  ArgParser p("bench-attention",
              "[--backend cpu|cuda] [--contexts 1024,4096,16384,65536] [--dtypes f16,int8,int4] "
              "[--heads 32] [--kv-heads 8] [--head-dim 128] [--block-size 16] [-r 20] [-t N]");
  p.option({"--backend"}, "cpu (default) or cuda");
  p.option({"--contexts"}, "context lengths, comma-separated (default 1024,4096,16384,65536)");
  p.option({"--dtypes"}, "KV dtypes (K and V alike), comma-separated (default f16,int8,int4)");
  p.option({"--heads"}, "query heads (default 32)");
  p.option({"--kv-heads"}, "KV heads (default 8)");
  p.option({"--head-dim"}, "head dimension (default 128)");
  p.option({"--block-size"}, "token slots per KV block (default 16)");
  p.option({"-r", "--repetitions"}, "timed calls; the median is reported (default 20)");
  p.option({"-t", "--threads"}, "CPU threads (default: all cores)");
  p.flag({"--ggml-order"},
         "CPU: time llama.cpp's fp16 attention order (the exact reference path) instead of the "
         "default float attention");
  p.flag({"--json"}, "print the results as JSON");
  if (!p.parse(args)) return 0;
  const BenchOptions o = parse_options(p);
  const Target target = prepare_target(o);
  ThreadPool pool(o.threads);
  std::optional<HostCacheFlusher> flusher;
  if (!o.cuda) flusher.emplace();
  std::vector<Row> rows;
  for (const std::int64_t context : o.contexts) {
    for (const KvDtype dtype : o.dtypes) {
      Row r = measure(o, dtype, context, pool, flusher ? &*flusher : nullptr).row;
      r.us_per_call = median(r.samples_us);
      rows.push_back(std::move(r));
    }
  }
  add_speedups(rows);
  if (p.has("--json")) {
    fmt::print("{}\n", to_json(o, target, rows).dump(2));
  } else {
    print_table(o, target, rows);
  }
  return 0;
}

}  // namespace kvscope::cli
