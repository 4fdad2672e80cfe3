// The JSON OpenAI clients read back: a whole completion, one streamed chunk, usage, and
// log-probabilities, for both endpoints (chat.completion / text_completion shapes).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "run/request.h"
#include "serve/api_request.h"
#include "serve/request_stream.h"

namespace kvscope::serve {

struct ResponseHead {
  ApiEndpoint endpoint = ApiEndpoint::Chat;
  std::string id;            // "chatcmpl-N" / "cmpl-N"
  std::int64_t created = 0;  // Unix seconds
  std::string model;
  bool logprobs = false;
  int top_logprobs = 0;
};

// OpenAI's finish_reason: "stop" (end of generation, a stop string) or "length".
std::string finish_reason_text(FinishReason reason);

nlohmann::json usage_json(std::int64_t prompt_tokens, std::int64_t completion_tokens);

// The request's logprobs object for `tokens` (null when not asked for). Completions'
// text_offset counts from `text_offset` (the length of the text before these tokens).
nlohmann::json logprobs_json(const ResponseHead& head, std::span<const StreamToken> tokens,
                             std::int64_t text_offset);

// A non-streamed response: text, finish reason, usage.
nlohmann::json completion_json(const ResponseHead& head, const std::string& text,
                               std::span<const StreamToken> tokens, FinishReason reason,
                               std::int64_t prompt_tokens);

// One SSE chunk: `text` (and the logprobs of `tokens`); the first chat chunk carries the
// role, the last one the finish reason.
nlohmann::json chunk_json(const ResponseHead& head, const std::string& text,
                          std::span<const StreamToken> tokens, std::int64_t text_offset, bool first,
                          std::optional<FinishReason> finish);

// The chunk stream_options.include_usage asks for after the last one (no choices).
nlohmann::json usage_chunk_json(const ResponseHead& head, std::int64_t prompt_tokens,
                                std::int64_t completion_tokens);

// "data: JSON\n\n"
std::string sse_event(const nlohmann::json& value);

}  // namespace kvscope::serve
