// Named request traces for the paged-vs-contiguous demo, each with the memory size it is
// meant to be simulated in:
//   chat            ShareGPT-like conversations (vLLM's paper: prompts ~160 tokens on
//                   average, outputs ~340), arriving as a Poisson stream;
//   api-burst       short API calls arriving in bursts of many at once;
//   long-documents  long prompts (summarise / ask about a document), short answers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/trace/request_trace.h"

namespace kvscope {

struct TracePreset {
  std::string name;         // "chat", "api-burst", "long-documents"
  std::string description;  // one line for --help and the UI
  TraceSpec spec;
  std::int64_t capacity = 8192;  // token slots of KV memory it is meant for
};

// The presets above, in that order.
const std::vector<TracePreset>& trace_presets();

// UsageError naming the known presets when `name` is not one.
const TracePreset& find_trace_preset(std::string_view name);

}  // namespace kvscope
