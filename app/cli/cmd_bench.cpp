// `kvscope-cli bench`: prompt-processing and decode speed, like llama-bench: a prompt of
// -p random token ids is processed, then -n tokens are generated greedily; each is
// repeated -r times and the median tokens/s is reported.
#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/engine_args.h"
#include "run/engine.h"
#include "util/error.h"

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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int cmd_bench(const Args& args) {
  ArgParser p("bench", "-m MODEL [-p 128] [-n 128] [-r 5] [options]");
  declare_engine_options(p);
  p.option({"-p", "--n-prompt"}, "prompt tokens (default 128)");
  p.option({"-n", "--n-gen"}, "generated tokens (default 128)");
  p.option({"-r", "--repetitions"}, "repetitions; the median is reported (default 5)");
  p.flag({"--json"}, "print prompt_tokens_per_s and decode_tokens_per_s as JSON");
  if (!p.parse(args)) return 0;
  const std::int64_t n_prompt = p.get_int("-p", 128), n_gen = p.get_int("-n", 128);
  const std::int64_t reps = p.get_int("-r", 5);
  if (n_prompt < 1 || n_gen < 1 || reps < 1) {
    throw_error<UsageError>("-p ({}), -n ({}) and -r ({}) must be at least 1", n_prompt, n_gen,
                            reps);
  }
  Engine engine(p.required("-m"), engine_options(p));
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
  if (p.has("--json")) {
    nlohmann::json out = {{"model", engine.spec().name},   {"backend", engine.backend().name()},
                          {"n_prompt", n_prompt},          {"n_gen", n_gen},
                          {"repetitions", reps},           {"prompt_tokens_per_s", pp_med},
                          {"decode_tokens_per_s", tg_med}, {"prompt_samples", pp},
                          {"decode_samples", tg}};
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("model {} | backend {} | KV {}/{}\n", engine.spec().name, engine.backend().name(),
               p.get_or("-ctk", "f16"), p.get_or("-ctv", "f16"));
    fmt::print("pp{:<6} {:>12.1f} tokens/s (median of {})\n", n_prompt, pp_med, reps);
    fmt::print("tg{:<6} {:>12.1f} tokens/s (median of {})\n", n_gen, tg_med, reps);
  }
  return 0;
}

}  // namespace kvscope::cli
