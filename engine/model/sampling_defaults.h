// The sampling values a model's authors publish with it: a Hugging Face folder's
// generation_config.json (do_sample, temperature, top_k, top_p, min_p, repetition_penalty).
// A chat, `kvscope-cli run` / `chat` and a server request start from them when the user names
// no value of their own (run/model_sampling.h turns them into SamplingParams). Only what the
// file says is set: a field it leaves out keeps KVScope's own default, as vLLM does with these
// files (transformers would fall back to its GenerationConfig defaults, top_k 50 among them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvscope {

struct SamplingDefaults {
  // false: greedy, whatever the other values say (transformers ignores them then).
  std::optional<bool> do_sample;
  std::optional<double> temperature;  // >= 0; 0 = greedy
  std::optional<std::int64_t> top_k;  // >= 0; 0 = off
  std::optional<double> top_p;        // [0, 1]; 1 = off
  std::optional<double> min_p;        // [0, 1]; 0 = off
  // > 0; 1 = off. transformers applies it over the whole sequence, prompt included.
  std::optional<double> repetition_penalty;
  std::string source;  // the file they came from ("" when the model has none)
  // Values the file gives but that are not used, each with why ("generation_config.json:
  // top_p = 1.5 ignored: ..."), for the CLI and the app to show.
  std::vector<std::string> notes;

  // True when the file sets at least one sampling value.
  bool any() const {
    return do_sample || temperature || top_k || top_p || min_p || repetition_penalty;
  }
};

}  // namespace kvscope
