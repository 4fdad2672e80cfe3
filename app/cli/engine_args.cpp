#include "cli/engine_args.h"

#include <cctype>
#include <charconv>

#include "kv/kv_format.h"
#include "util/error.h"

namespace kvscope::cli {

void declare_engine_options(ArgParser& p) {
  p.option({"-m", "--model"}, "model: a GGUF file or a Hugging Face folder");
  p.option({"-c", "--ctx-size"}, "context length in tokens (default: the model's, at most 8192)");
  p.option({"-t", "--threads"}, "CPU threads (default: all cores)");
  p.option({"-ctk", "--cache-type-k"}, "K cache dtype: f16, int8 or int4 (default f16)");
  p.option({"-ctv", "--cache-type-v"}, "V cache dtype: f16, int8 or int4 (default f16)");
  p.option({"--block-size"}, "KV cache block size in tokens (default 16)");
  p.option({"--backend"}, "auto, cpu or cuda (default auto)");
  p.option({"--kv-budget"}, "bytes for the KV cache pool, e.g. 512MiB (default: 4 full contexts)");
  p.option({"--memory"}, "device memory to plan within, e.g. 16GiB (a simulated GPU on the CPU)");
  p.option({"-b", "--batch-size"}, "tokens per forward step / prompt chunk (default 512)");
}

std::uint64_t parse_size(const std::string& flag, const std::string& text) {
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || value < 0) {
    throw_error<UsageError>("option {}: '{}' is not a size (like 8GiB, 16GB, 512MiB)", flag, text);
  }
  std::string unit(ptr, end);
  for (char& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  double mult = 0;
  if (unit.empty() || unit == "b") mult = 1;
  else if (unit == "k" || unit == "kib") mult = 1024.0;
  else if (unit == "m" || unit == "mib") mult = 1024.0 * 1024;
  else if (unit == "g" || unit == "gib") mult = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tib") mult = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "kb") mult = 1e3;
  else if (unit == "mb") mult = 1e6;
  else if (unit == "gb") mult = 1e9;
  else if (unit == "tb") mult = 1e12;
  else throw_error<UsageError>("option {}: unknown size unit '{}' in '{}'", flag, unit, text);
  return static_cast<std::uint64_t>(value * mult);
}

EngineOptions engine_options(const ArgParser& p) {
  EngineOptions o;
  o.backend = p.get_or("--backend", "auto");
  o.cuda_factory = cuda_backend_factory();
  o.n_threads = static_cast<int>(p.get_int("-t", 0));
  if (o.n_threads < 0) throw_error<UsageError>("option -t: {} threads", o.n_threads);
  o.context_length = p.get_int("-c", 0);
  o.k_dtype = parse_kv_dtype(p.get_or("-ctk", "f16"));
  o.v_dtype = parse_kv_dtype(p.get_or("-ctv", "f16"));
  o.block_size = p.get_int("--block-size", 16);
  if (auto v = p.get("--kv-budget")) o.kv_budget_bytes = parse_size("--kv-budget", *v);
  if (auto v = p.get("--memory")) o.memory_budget_bytes = parse_size("--memory", *v);
  o.scheduler.max_batch_tokens = p.get_int("-b", 512);
  return o;
}

}  // namespace kvscope::cli
