// Shared fixtures of the scheduler and Engine tests: engines on the real stories260K model
// with a small context, greedy requests, a recorder of everything a request streams, and
// each prompt's output when it runs alone on a roomy engine (the reference every batched,
// chunked, preempted or forked run must reproduce exactly).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "model/model_spec.h"
#include "run/engine.h"
#include "support/tiny_llama_spec.h"

namespace kvscope::test {

inline constexpr std::int64_t kContext = 256;

// Prompts of different lengths (5, 12, 5 and 9 tokens with BOS) so that batched sequences
// sit at different positions and cross block boundaries at different steps.
inline const std::vector<std::string>& story_prompts() {
  static const std::vector<std::string> prompts = {
      "Once upon a time", "Lily and Ben went to the park", "The little dog", "Tom had a red ball"};
  return prompts;
}

// One thread: the machine running the tests is small and shared, and the decoder's output
// does not depend on the thread count.
inline EngineOptions small_options(std::int64_t context = kContext) {
  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  o.n_threads = 1;
  o.context_length = context;
  return o;
}

// Options whose KV pool holds exactly n_blocks blocks of block_size tokens (sized through
// kv_budget_bytes, as a user would, from the bytes of one block).
inline EngineOptions pool_of(const std::string& model_path, std::int64_t n_blocks,
                             std::int64_t block_size = 16) {
  EngineOptions o = small_options();
  o.block_size = block_size;
  const Engine probe(model_path, o);
  o.kv_budget_bytes =
      static_cast<std::uint64_t>(n_blocks * probe.kv_cache().layout(0).block_bytes());
  return o;
}

inline GenerationRequest greedy_request(const Engine& engine, const std::string& prompt,
                                        std::int64_t max_tokens) {
  GenerationRequest r;
  r.prompt = engine.tokenize(prompt, true);
  r.max_tokens = max_tokens;
  r.sampling.temperature = 0;
  return r;
}

// Everything one request streamed, and how it finished.
struct Recorded {
  std::vector<TokenId> ids;  // token of every event with token >= 0, in order
  std::string streamed;      // concatenation of every event's text
  std::vector<TokenEvent> events;
  std::vector<std::string> streamed_after;  // [events] `streamed` right after each event
  RequestResult result;
  int n_finished = 0;
  bool finished() const { return n_finished > 0; }
};

inline RequestCallbacks record_into(Recorded& rec) {
  RequestCallbacks cb;
  cb.on_token = [&rec](const TokenEvent& ev) {
    if (ev.token >= 0) rec.ids.push_back(ev.token);
    rec.streamed += ev.text;
    rec.events.push_back(ev);
    rec.streamed_after.push_back(rec.streamed);
  };
  cb.on_finish = [&rec](const RequestResult& r) {
    rec.result = r;
    ++rec.n_finished;
  };
  return cb;
}

// Steps the engine until it is idle; fails (instead of hanging) after max_steps.
inline std::int64_t run_bounded(Engine& engine, std::int64_t max_steps = 20000) {
  std::int64_t steps = 0;
  while (engine.step()) {
    if (++steps > max_steps) {
      ADD_FAILURE() << "the engine was still busy after " << max_steps << " steps";
      break;
    }
  }
  return steps;
}

// The greedy output of `prompt` generating `max_tokens` alone on a fresh engine whose pool
// holds the whole context (block size 16, whole prompt in one step). Cached per process.
inline const RequestResult& solo_run(const std::string& model_path, const std::string& prompt,
                                     std::int64_t max_tokens) {
  static std::map<std::pair<std::string, std::int64_t>, RequestResult> cache;
  const auto key = std::make_pair(prompt, max_tokens);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Engine engine(model_path, small_options());
  Recorded rec;
  engine.submit(greedy_request(engine, prompt, max_tokens), record_into(rec));
  run_bounded(engine);
  EXPECT_EQ(rec.n_finished, 1) << prompt;
  EXPECT_EQ(rec.result.reason, FinishReason::Length) << prompt;
  EXPECT_EQ(static_cast<std::int64_t>(rec.result.generated.size()), max_tokens) << prompt;
  return cache.emplace(key, rec.result).first->second;
}

}  // namespace kvscope::test
