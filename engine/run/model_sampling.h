// A request's SamplingParams when its user names no value: KVScope's own defaults
// (SamplingParams{}) with what the model publishes (model/sampling_defaults.h, a HF folder's
// generation_config.json) over them. The chat window starts a new chat from this,
// `kvscope-cli run` / `chat` fill every sampling flag not given from it, and the server a
// request's omitted fields.
#pragma once

#include "model/sampling_defaults.h"
#include "run/sampler.h"

namespace kvscope {

// `base` with the model's values over it, field by field:
// - do_sample false: temperature 0 (greedy); else temperature as given;
// - top_k, top_p, min_p as given (top_k past INT_MAX keeps every token, as INT_MAX does);
// - repetition_penalty as given, over the whole sequence (repeat_last_n -1), prompt included,
//   as transformers and vLLM apply it.
// Fields the file leaves out keep base's value. The result passes validate() when base does.
SamplingParams with_model_defaults(const SamplingDefaults& model, SamplingParams base = {});

}  // namespace kvscope
