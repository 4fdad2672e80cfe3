// SamplingParams (run/sampler.h) as a JSON object, written and read in one place: the CLI's
// `run --json` reports it, the app's saved chats and exported chats keep it.
//
//   {"temperature": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.0,
//    "repeat_last_n": 64, "frequency_penalty": 0.0, "presence_penalty": 0.0, "seed": 0}
//
// The seed is written as a number (all 64 bits: nlohmann::json holds it exactly); a reader
// whose numbers are doubles would round it, so sampling_from_json also takes it as a decimal
// string, as the app's chats store it. This is KVScope's own form, not OpenAI's request body
// (serve/api_request.h reads that one).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "run/sampler.h"

namespace kvscope {

nlohmann::json sampling_to_json(const SamplingParams& params);

// Fields left out keep SamplingParams' defaults; fields it does not know are ignored (a later
// version, or a caller's own fields beside these, such as the app's max_tokens). Throws
// UsageError naming the field for a value of the wrong type or out of range (validate()),
// and for anything but an object.
SamplingParams sampling_from_json(const nlohmann::json& object);

}  // namespace kvscope
