// `kvscope-cli watch URL`: follows a serving engine's /metrics (vLLM, llama-server, KVScope's
// own server) and prints one line per scrape: KV cache usage, running and waiting requests,
// preemptions, prefix-cache hit rate, tokens/s and TTFT percentiles (engine/remote). With
// --model PRESET --gpu GPU it also prints the KV pool vLLM's own accounting plans for that
// model and GPU (engine/plan/vllm_memory.h), beside the server's cache_config_info pool with the
// difference in percent, and per line the usage the planner predicts for the tokens the server
// holds. A failed scrape
// prints its reason and the next one is tried at the next tick.
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "cli/arg_parser.h"
#include "cli/command.h"
#include "cli/presets_path.h"
#include "plan/parallel_plan.h"
#include "plan/units.h"
#include "remote/kv_prediction.h"
#include "remote/metrics_scrape.h"
#include "remote/watch_series.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {

void declare_watch_options(ArgParser& p) {
  p.option({"--interval"}, "seconds between scrapes, 0.1 to 3600 (default 1)");
  p.option({"--count"}, "stop after N scrapes (default: until interrupted)");
  p.option({"--timeout"}, "seconds to wait for a connection and for an answer (default 2)");
  p.option({"--window"}, "seconds the prefix hit rate and TTFT percentiles cover (default 30)");
  p.option({"--model"}, "model preset the server runs, to compare with the planner");
  p.option({"--gpu"}, "GPU preset the server runs on (with --model)");
  p.option({"--util"}, "the server's GPU memory utilisation for the plan (default 0.9)");
  p.option({"--tp"}, "tensor parallel size for the plan (default 1)");
  p.option({"--pp"}, "pipeline parallel size for the plan (default 1)");
  p.option({"--kv-cache-dtype"}, "auto or fp8, for the plan (default auto)");
  p.option({"--block-size"}, "KV block size in tokens, for the plan (default 16)");
  p.option({"--max-num-seqs"},
           "the server's max_num_seqs, for the plan's sampler peak (default: the release's)");
  p.option({"--vllm-version"},
           "the server's vLLM release, for the plan: 0.6.4, 0.6.5, 0.7-v0, 0.10, 0.26 (default)");
  p.option({"--vllm-weights"},
           "the checkpoint's format, for the plan: bf16 (default), fp8, awq, "
           "gptq, bnb");
  p.option({"-c", "--ctx"}, "the server's max_model_len (default: the model's context)");
  p.option({"--presets"}, "folder holding models.json and gpus.json");
}

std::optional<PlannedPool> plan_from(const ArgParser& p) {
  if (p.has("--model") != p.has("--gpu")) {
    throw_error<UsageError>("give --model PRESET and --gpu GPU together to compare with the plan");
  }
  if (!p.has("--model")) return std::nullopt;
  const auto dir = presets_dir(p);
  const auto models = load_model_presets(dir / "models.json");
  const auto gpus = load_gpu_presets(dir / "gpus.json");
  PoolQuestion q;
  q.utilisation = p.get_double("--util", 0.9, 0.01, 1.0);
  q.tp = p.get_int("--tp", 1, 1, kMaxNodeGpus);
  q.pp = p.get_int("--pp", 1, 1, kMaxNodeGpus);
  q.kv_dtype = parse_serving_kv_dtype(p.get_or("--kv-cache-dtype", "auto"));
  q.block_size = p.get_int("--block-size", 16, 1, 4096);
  q.max_num_seqs = p.get_int("--max-num-seqs", 0, 1, 1 << 20);
  q.version = parse_vllm_version(p.get_or("--vllm-version", "latest"));
  q.weights = parse_vllm_weight_format(p.get_or("--vllm-weights", "bf16"));
  q.context = p.get_int("-c", 0, 1, std::int64_t{1} << 30);
  return plan_server_pool(find_model_preset(models, p.required("--model")),
                          find_gpu_preset(gpus, p.required("--gpu")), q);
}

void print_plan(const PlannedPool& pool) {
  const PoolQuestion& q = pool.question;
  fmt::print(
      "Planner: {} on {} x {} at utilisation {:.2f} ({} weights, KV {}, {}): KV pool {} blocks "
      "x {} = {} tokens{}\n",
      pool.model, q.tp * q.pp, pool.gpu, q.utilisation, vllm_weight_format_name(q.weights),
      serving_kv_dtype_name(q.kv_dtype), vllm_version_info(q.version).label,
      group_digits(pool.blocks), q.block_size, group_digits(pool.tokens),
      pool.fits ? "" : " (weights and the profiling run leave no room for a KV pool)");
}

// Once, on the first good scrape: what the server is and its pool against the plan.
void print_server(const ServerSample& s, const std::optional<PlannedPool>& plan) {
  std::string line = fmt::format("Server: {}", server_kind_name(s.kind));
  if (!s.model_name.empty()) line += fmt::format(", model {}", s.model_name);
  if (const auto pool = s.kv_pool_tokens()) {
    line += fmt::format(", KV pool {} blocks x {} = {} tokens", group_digits(*s.kv_pool_blocks),
                        *s.kv_block_size, group_digits(*pool));
    if (plan) {
      const double diff =
          100.0 * (static_cast<double>(plan->tokens) / static_cast<double>(*pool) - 1.0);
      line += fmt::format(" (planner {} tokens, {:+.1f}%)", group_digits(plan->tokens), diff);
    }
  } else if (s.kv_pool_blocks) {
    line += fmt::format(", KV pool {} blocks", group_digits(*s.kv_pool_blocks));
  }
  fmt::print("{}\n", line);
  if (s.kind == ServerKind::Unknown) {
    fmt::print("  (no vLLM, llama-server or KVScope metric names: nothing to show)\n");
  }
}

std::string cell(const std::optional<double>& v, const char* format, double scale = 1.0) {
  return v ? fmt::format(fmt::runtime(format), *v * scale) : std::string("-");
}

void print_header(bool planned) {
  fmt::print("{:>8}  {:>7} {:>8} {:>7} {:>7} {:>8} {:>7} {:>9} {:>9} {:>9}\n", "time", "KV use",
             planned ? "planner" : "", "running", "waiting", "preempt", "prefix", "tok/s",
             "TTFT p50", "TTFT p99");
}

void print_point(const WatchPoint& w, const std::optional<PlannedPool>& plan) {
  std::optional<double> planned;
  if (plan && plan->tokens > 0 && w.kv_tokens) {
    planned = 100.0 * *w.kv_tokens / static_cast<double>(plan->tokens);
  }
  fmt::print("{:>7.1f}s  {:>7} {:>8} {:>7} {:>7} {:>8} {:>7} {:>9} {:>9} {:>9}\n", w.seconds,
             cell(w.kv_usage_pct, "{:.1f}%"), plan ? cell(planned, "{:.1f}%") : "",
             cell(w.running, "{:.0f}"), cell(w.waiting, "{:.0f}"), cell(w.preemptions, "{:.0f}"),
             cell(w.prefix_hit_pct, "{:.1f}%"), cell(w.generation_tokens_per_s, "{:.1f}"),
             cell(w.ttft_p50, "{:.0f} ms", 1000.0), cell(w.ttft_p99, "{:.0f} ms", 1000.0));
}

}  // namespace

int cmd_watch(const Args& args) {
  ArgParser p("watch",
              "kvscope-cli watch URL [--interval S] [--count N] [--model PRESET --gpu GPU]\n"
              "Follows a server's Prometheus /metrics (vLLM, llama-server, kvscope-cli serve).");
  declare_watch_options(p);
  if (!p.parse(args)) return 0;
  if (p.positional().size() != 1) {
    throw_error<UsageError>("give one URL, e.g. http://127.0.0.1:8000 (/metrics is added)");
  }
  const MetricsEndpoint endpoint = parse_metrics_url(p.positional()[0]);
  const double interval = p.get_double("--interval", 1.0, 0.1, 3600.0);
  const std::int64_t count = p.get_int("--count", 0, 1, std::int64_t{1} << 40);
  ScrapeOptions options;
  options.connect_timeout = options.read_timeout = p.get_double("--timeout", 2.0, 0.1, 600.0);
  WatchSeries series(p.get_double("--window", WatchSeries::kDefaultWindow, 1.0, 86400.0));
  const std::optional<PlannedPool> plan = plan_from(p);

  fmt::print("Watching {} every {:g} s{}\n", endpoint.url(), interval,
             count > 0 ? fmt::format(", {} scrapes", count) : std::string(" (Ctrl-C stops)"));
  if (plan) print_plan(*plan);
  const auto start = std::chrono::steady_clock::now();
  auto next = start;
  std::int64_t good = 0;
  for (std::int64_t i = 0; count == 0 || i < count; ++i) {
    const double now =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const ScrapeResult r = scrape_metrics(endpoint, options);
    if (r.ok()) {
      const ServerSample sample = read_server_sample(*r.dump);
      if (good++ == 0) {
        print_server(sample, plan);
        print_header(plan.has_value());
      }
      print_point(series.add(now, sample), plan);
    } else {
      fmt::print("{:>7.1f}s  {}: {}{}\n", now, scrape_status_name(r.status), r.message,
                 count == 0 || i + 1 < count ? " (retrying)" : "");
    }
    std::fflush(stdout);
    if (count != 0 && i + 1 == count) break;
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(interval));
    std::this_thread::sleep_until(next);
  }
  if (good == 0) throw_error<Error>("no scrape of {} succeeded", endpoint.url());
  return 0;
}

}  // namespace kvscope::cli
