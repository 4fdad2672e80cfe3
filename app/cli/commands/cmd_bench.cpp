// `kvscope-cli bench`: prompt-processing and decode speed, like llama-bench: a prompt of
// -p random token ids is processed, then -n tokens are generated greedily; each is
// repeated -r times and the median tokens/s is reported. Then the memory side of decoding:
// the bytes one decode step reads (planner's roofline: every weight once, plus the KV
// cache at the mean context of the run) and, at the measured decode speed, which fraction
// of the device's measured copy bandwidth that is. The model is a file (-m) or a
// random-weight model of a preset's shape (--synthetic, bench_synthetic.h).
#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench_synthetic.h"
#include "cli/command.h"
#include "cli/copy_bandwidth.h"
#include "cli/engine_args.h"
#include "cli/json_text.h"
#include "plan/layer_split_plan.h"
#include "plan/solvers.h"
#include "run/cpu_backend.h"
#include "run/engine.h"
#include "run/plan_check.h"
#include "util/error.h"
#include "util/stats.h"

namespace kvscope::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Sample {
  double prompt_tps = 0;
  double decode_tps = 0;
};

// One prompt + decode run. The prompt is random ids (skipping the first few, which are
// the special tokens of most vocabularies), as llama-bench does.
Sample run_once(Engine& engine, std::int64_t n_prompt, std::int64_t n_gen, std::mt19937& rng) {
  GenerationRequest r;
  std::uniform_int_distribution<TokenId> pick(3,
                                              static_cast<TokenId>(engine.spec().vocab_size - 1));
  r.prompt.resize(static_cast<std::size_t>(n_prompt));
  for (auto& t : r.prompt) t = pick(rng);
  r.max_tokens = std::max<std::int64_t>(n_gen, 1);
  r.sampling.temperature = 0;
  r.stop_at_end_of_generation = false;
  const auto start = Clock::now();
  Clock::time_point first;
  std::int64_t tokens = 0;
  engine.generate(std::move(r), [&](const TokenEvent& ev) {
    if (ev.token >= 0 && tokens++ == 0) first = Clock::now();
  });
  const auto end = Clock::now();
  Sample s;
  s.prompt_tps =
      static_cast<double>(n_prompt) / std::chrono::duration<double>(first - start).count();
  if (tokens > 1) {
    s.decode_tps =
        static_cast<double>(tokens - 1) / std::chrono::duration<double>(end - first).count();
  }
  return s;
}

// What one decode step of this run reads, by the planner's roofline (batch 1, the mean
// context of the decode phase).
RooflineEstimate decode_traffic(const Engine& engine, std::int64_t n_prompt, std::int64_t n_gen,
                                double bandwidth_gb_s) {
  PlanRequest r = engine_plan_request(engine);
  r.context = n_prompt + n_gen / 2;
  return roofline_decode(r, bandwidth_gb_s);
}

// A model split between GPU and CPU (run/split_backend.h): a decode step streams each side's
// layers from its own memory, so the measured rate is set beside the split's roofline
// (plan_layer_split at the engine's layer count): the VRAM's bytes over the GPU's copy
// bandwidth plus the RAM's over the host's.
struct SplitTraffic {
  LayerSplitPlan plan;
  double gpu_gb_s = 0.0;  // measured; 0 in a build without CUDA
  double cpu_gb_s = 0.0;
};

SplitTraffic split_traffic(const Engine& engine, std::int64_t context, double host_gb_s) {
  SplitTraffic t;
  t.gpu_gb_s = measure_gpu_copy_bandwidth();
  t.cpu_gb_s = host_gb_s;
  t.plan = engine_split_plan(engine, context, t.gpu_gb_s, t.cpu_gb_s);
  return t;
}

void print_split_traffic(const SplitTraffic& t, double tg_med) {
  const LayerSplitPlan& s = t.plan;
  fmt::print(
      "split {}/{} layers on the GPU: a token reads {:.1f} MB from VRAM and {:.1f} MB from RAM\n",
      s.gpu_layers, s.n_layers, static_cast<double>(s.gpu_bytes_per_step) / 1e6,
      static_cast<double>(s.cpu_bytes_per_step) / 1e6);
  const double ram_ms = static_cast<double>(s.cpu_bytes_per_step) / (t.cpu_gb_s * 1e9) * 1e3;
  fmt::print("RAM at the measured {:.1f} GB/s: {:.2f} ms of the {:.2f} ms a token took\n",
             t.cpu_gb_s, ram_ms, 1e3 / tg_med);
  if (s.tokens_per_s > 0.0) {
    fmt::print("roofline {:.1f} tokens/s (VRAM at the measured {:.1f} GB/s); measured {:.0f}%\n",
               s.tokens_per_s, t.gpu_gb_s, 100.0 * tg_med / s.tokens_per_s);
  }
}

nlohmann::json split_json(const SplitTraffic& t) {
  return {{"gpu_layers", t.plan.gpu_layers},
          {"n_layers", t.plan.n_layers},
          {"gpu_bytes_per_token", t.plan.gpu_bytes_per_step},
          {"cpu_bytes_per_token", t.plan.cpu_bytes_per_step},
          {"gpu_copy_bandwidth_gb_s", t.gpu_gb_s},
          {"cpu_copy_bandwidth_gb_s", t.cpu_gb_s},
          {"roofline_tokens_per_s", t.plan.tokens_per_s}};
}

}  // namespace

int cmd_bench(const Args& args) {
  ArgParser p("bench", "-m MODEL | --synthetic SHAPE [--weights TYPE]  [-p 128] [-n 128] [-r 5]");
  declare_engine_options(p);
  declare_synthetic_options(p);
  p.option({"-p", "--n-prompt"}, "prompt tokens (default 128)");
  p.option({"-n", "--n-gen"}, "generated tokens (default 128)");
  p.option({"-r", "--repetitions"}, "repetitions; the median is reported (default 5)");
  p.flag({"--json"}, "print prompt_tokens_per_s and decode_tokens_per_s as JSON");
  if (!p.parse(args)) return 0;
  const std::int64_t n_prompt = p.get_int("-p", 128, 1, std::int64_t{1} << 20);
  const std::int64_t n_gen = p.get_int("-n", 128, 1, std::int64_t{1} << 20);
  const std::int64_t reps = p.get_int("-r", 5, 1, 1000);
  if (n_prompt < 1 || n_gen < 1 || reps < 1) {
    throw_error<UsageError>("-p ({}), -n ({}) and -r ({}) must be at least 1", n_prompt, n_gen,
                            reps);
  }
  EngineOptions options = engine_options(p);
  // Without -c the context is what the run needs (as llama-bench sizes n_ctx): a large
  // model's full context would take a pool of gigabytes for nothing.
  if (!p.has("-c")) options.context_length = n_prompt + n_gen + 16;
  Engine engine(bench_model_path(p), options);
  if (!engine.backend_note().empty()) fmt::print(stderr, "note: {}\n", engine.backend_note());
  std::mt19937 rng(1234);
  run_once(engine, std::min<std::int64_t>(n_prompt, 16), 4, rng);  // warm-up: pages, threads
  std::vector<double> pp, tg;
  for (std::int64_t i = 0; i < reps; ++i) {
    const Sample s = run_once(engine, n_prompt, n_gen, rng);
    pp.push_back(s.prompt_tps);
    tg.push_back(s.decode_tps);
  }
  const double pp_med = median(pp), tg_med = median(tg);
  const double copy_gb_s = measure_copy_bandwidth(
      engine, options.n_threads > 0 ? options.n_threads
                                    : static_cast<int>(std::thread::hardware_concurrency()));
  const RooflineEstimate traffic = decode_traffic(engine, n_prompt, n_gen, copy_gb_s);
  std::optional<SplitTraffic> split;
  if (engine.split_gpu_layers() > 0) split = split_traffic(engine, n_prompt + n_gen / 2, copy_gb_s);
  const double achieved_gb_s = static_cast<double>(traffic.bytes_per_step) * tg_med / 1e9;
  const double fraction = achieved_gb_s / copy_gb_s;
  if (p.has("--json")) {
    nlohmann::json out = {{"model", engine.spec().name},
                          {"backend", engine.backend().name()},
                          {"n_prompt", n_prompt},
                          {"n_gen", n_gen},
                          {"repetitions", reps},
                          {"prompt_tokens_per_s", pp_med},
                          {"decode_tokens_per_s", tg_med},
                          {"prompt_samples", pp},
                          {"decode_samples", tg},
                          {"bytes_per_token", traffic.bytes_per_step},
                          {"weight_bytes_per_token", traffic.weight_bytes_read},
                          {"kv_bytes_per_token", traffic.kv_bytes_read},
                          {"copy_bandwidth_gb_s", copy_gb_s},
                          {"achieved_gb_s", achieved_gb_s},
                          {"bandwidth_fraction", fraction}};
    if (split) out["split"] = split_json(*split);
    if (const std::string graphs = cuda_graph_summary(engine.backend()); !graphs.empty()) {
      out["cuda_graphs"] = graphs;
    }
    if (const auto attention = cuda_attention_summary(engine.backend()); !attention.empty()) {
      out["cuda_attention"] = attention;
    }
    if (const auto* cpu = dynamic_cast<const CpuBackend*>(&engine.backend())) {
      out["cpu_kernels"] = cpu->kernels();
    }
    fmt::print("{}\n", json_text(out));
  } else {
    fmt::print("model {} | backend {} | KV {}/{}\n", engine.spec().name, engine.backend().name(),
               p.get_or("-ctk", "f16"), p.get_or("-ctv", "f16"));
    if (const auto* cpu = dynamic_cast<const CpuBackend*>(&engine.backend())) {
      fmt::print("{}\n", cpu->kernels());
    }
    fmt::print("pp{:<6} {:>12.1f} tokens/s (median of {})\n", n_prompt, pp_med, reps);
    fmt::print("tg{:<6} {:>12.1f} tokens/s (median of {})\n", n_gen, tg_med, reps);
    fmt::print("decode reads {:.1f} MB per token (weights {:.1f} MB, KV {:.2f} MB at {} tokens)\n",
               static_cast<double>(traffic.bytes_per_step) / 1e6,
               static_cast<double>(traffic.weight_bytes_read) / 1e6,
               static_cast<double>(traffic.kv_bytes_read) / 1e6, n_prompt + n_gen / 2);
    if (split) {
      print_split_traffic(*split, tg_med);  // one bandwidth does not bound a split
    } else {
      fmt::print("= {:.1f} GB/s, {:.0f}% of the measured copy bandwidth ({:.1f} GB/s)\n",
                 achieved_gb_s, 100.0 * fraction, copy_gb_s);
    }
    if (const std::string graphs = cuda_graph_summary(engine.backend()); !graphs.empty()) {
      fmt::print("{}\n", graphs);
    }
    for (const std::string& line : cuda_attention_summary(engine.backend())) {
      fmt::print("{}\n", line);
    }
  }
  return 0;
}

}  // namespace kvscope::cli
