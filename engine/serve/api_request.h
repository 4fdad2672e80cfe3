// The body of POST /v1/chat/completions and /v1/completions, read and validated before
// anything reaches the engine. Unknown fields are ignored (clients send many); a known field
// of the wrong type or out of range is a 400 naming it. The JSON itself is limited in depth
// before it is built (../shared/docs/bad-inputs.md: amplification and depth); the body size
// is limited by the HTTP server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "run/sampler.h"
#include "text/chat_template.h"

namespace kvscope::serve {

enum class ApiEndpoint { Chat, Completion };

struct ApiRequest {
  ApiEndpoint endpoint = ApiEndpoint::Chat;
  std::string model;                  // "" when the client named none
  std::vector<ChatMessage> messages;  // Chat: rendered with the model's chat template
  std::string prompt;                 // Completion: plain text
  bool stream = false;
  bool include_usage = false;   // stream_options.include_usage: a last chunk with usage
  std::int64_t max_tokens = 0;  // 0: until the context is full
  // The fields given, the server's defaults (below) for the others; seed drawn when absent.
  SamplingParams sampling;
  bool seeded = false;
  std::vector<std::string> stop;  // at most 4, none empty
  bool logprobs = false;
  int top_logprobs = 0;  // 0..20
};

constexpr int kMaxJsonDepth = 32;
constexpr int kMaxStopStrings = 4;
constexpr int kMaxTopLogprobs = 20;

// Parses `body` as JSON no deeper than kMaxJsonDepth; 400 with the parser's message otherwise.
nlohmann::json parse_json_body(std::string_view body);

// OpenAI's (and vLLM's) values for omitted sampling fields: temperature 1, top_p 1, no
// top-k, min-p or penalties. A server lays the model's generation_config.json over them
// (run/model_sampling.h), as vLLM does.
SamplingParams openai_sampling_defaults();

// Throws ApiError (400) naming the field at fault. Omitted sampling fields take `defaults`.
ApiRequest parse_api_request(std::string_view body, ApiEndpoint endpoint,
                             const SamplingParams& defaults = openai_sampling_defaults());

}  // namespace kvscope::serve
