// `kvscope-cli run`: generate from a prompt, printing the text as it streams, or one JSON
// object (--json) shaped like ../shared/reference/stories260K-greedy.json's cases.
// --snapshot F writes the KV cache as it stands after the reply (the prompt and reply kept
// in it) in the app's panel snapshot format (kv/panel_snapshot_json.h).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/engine_args.h"
#include "cli/sampling_args.h"
#include "kv/panel_snapshot_json.h"
#include "run/engine.h"
#include "run/memory_terms.h"
#include "run/sampling_json.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {

GenerationRequest request_from_args(const ArgParser& p, const Engine& engine) {
  GenerationRequest r;
  r.prompt = engine.tokenize(p.required("-p"), !p.has("--no-bos"));
  r.max_tokens = p.get_int("-n", 128, 1, std::int64_t{1} << 30);
  r.sampling = sampling_options(p, engine);
  r.top_logprobs = static_cast<int>(p.get_int("--top-logprobs", 0, 0, 100));
  r.stop_at_end_of_generation = !p.has("--ignore-eos");
  if (auto s = p.get("--stop")) r.stop_strings.push_back(*s);
  return r;
}

// What the request sampled with (the flags over the model's defaults): the fields run's flags
// set (it has none for the OpenAI penalties, which stay 0).
nlohmann::json sampling_json(const SamplingParams& s) {
  nlohmann::json j = sampling_to_json(s);
  j.erase("frequency_penalty");
  j.erase("presence_penalty");
  return j;
}

nlohmann::json steps_json(const std::vector<TokenEvent>& events) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& ev : events) {
    if (ev.token < 0) continue;
    nlohmann::json top = nlohmann::json::array();
    for (const auto& [id, lp] : ev.top) top.push_back({id, lp});
    steps.push_back({{"id", ev.token}, {"logprob", ev.logprob}, {"top", top}});
  }
  return steps;
}

// Written beside F, then renamed over it: a reader never sees half a file. F that exists and
// is neither a file nor a folder (/dev/stdout, a FIFO) is written through instead: a rename
// would put a file in the place of the device or the pipe.
void write_snapshot(const Engine& engine, const std::string& model, const std::string& path) {
  PanelSnapshotContext context;
  context.model = std::filesystem::path(model).filename().string();
  set_memory_terms(context, engine.memory_info(), engine.split_memory());
  const std::string text = panel_snapshot_json(engine.snapshot(), context);
  std::error_code ec;
  const std::filesystem::file_status target = std::filesystem::status(path, ec);
  if (std::filesystem::exists(target) && !std::filesystem::is_regular_file(target) &&
      !std::filesystem::is_directory(target)) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out.flush()) throw UsageError("--snapshot: cannot write " + path);
    return;
  }
  const std::string tmp = path + ".part";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw UsageError("--snapshot: cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw UsageError("--snapshot: cannot write " + path + ": " + ec.message());
}

}  // namespace

int cmd_run(const Args& args) {
  ArgParser p("run", "-m MODEL -p PROMPT [-n N] [options]");
  declare_engine_options(p);
  p.option({"-p", "--prompt"}, "the prompt text");
  p.option({"-n", "--n-predict"}, "tokens to generate (default 128)");
  declare_sampling_options(p);
  p.option({"--stop"}, "stop generating before this text");
  p.option({"--top-logprobs"}, "with --json: the K most likely tokens at each step");
  p.option({"--snapshot"}, "write the KV cache after the reply as a panel snapshot (JSON) to F");
  p.flag({"--ignore-eos"}, "keep generating past end-of-generation tokens");
  p.flag({"--no-bos"}, "do not add the BOS token");
  p.flag({"--json"},
         "print one JSON object: prompt_ids, generated_ids, text, finish_reason, sampling, steps");
  if (!p.parse(args)) return 0;

  Engine engine(p.required("-m"), engine_options(p));
  if (!engine.backend_note().empty()) fmt::print(stderr, "note: {}\n", engine.backend_note());
  print_sampling_notes(engine);
  GenerationRequest request = request_from_args(p, engine);
  const std::optional<std::string> snapshot = p.get("--snapshot");
  request.keep_cache = snapshot.has_value();  // the snapshot shows the reply's blocks
  const bool json = p.has("--json");
  const std::vector<TokenId> prompt = request.prompt;
  const SamplingParams sampling = request.sampling;
  std::vector<TokenEvent> events;
  const RequestResult result = engine.generate(std::move(request), [&](const TokenEvent& ev) {
    if (json) {
      events.push_back(ev);
    } else {
      fmt::print("{}", ev.text);
      std::fflush(stdout);
    }
  });
  if (json) {
    nlohmann::json out = {{"prompt_ids", prompt},
                          {"generated_ids", result.generated},
                          {"text", result.text},
                          {"finish_reason", finish_reason_name(result.reason)},
                          {"sampling", sampling_json(sampling)}};
    if (p.get_int("--top-logprobs", 0, 0, 100) > 0) out["steps"] = steps_json(events);
    fmt::print("{}\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("\n");
  }
  if (snapshot) write_snapshot(engine, p.required("-m"), *snapshot);
  if (result.reason == FinishReason::Error || result.reason == FinishReason::ContextFull) {
    fmt::print(stderr, "kvscope-cli run: stopped: {}\n", result.error);
  }
  return result.reason == FinishReason::Error ? 1 : 0;
}

}  // namespace kvscope::cli
