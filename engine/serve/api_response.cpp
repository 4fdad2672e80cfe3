#include "serve/api_response.h"

#include <nlohmann/json.hpp>

namespace kvscope::serve {

namespace {

using nlohmann::json;

// Model text is not always valid UTF-8 (a token may be half a character): invalid bytes
// become U+FFFD rather than an exception.
std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json bytes_of(const std::string& s) {
  json out = json::array();
  for (const char c : s) out.push_back(static_cast<unsigned char>(c));
  return out;
}

json chat_logprobs(const ResponseHead& head, std::span<const StreamToken> tokens) {
  json content = json::array();
  for (const StreamToken& t : tokens) {
    if (t.id < 0) continue;
    json top = json::array();
    for (std::size_t i = 0; i < t.top.size() && i < static_cast<std::size_t>(head.top_logprobs);
         ++i) {
      top.push_back({{"token", t.top[i].first},
                     {"logprob", t.top[i].second},
                     {"bytes", bytes_of(t.top[i].first)}});
    }
    content.push_back({{"token", t.piece},
                       {"logprob", t.logprob},
                       {"bytes", bytes_of(t.piece)},
                       {"top_logprobs", std::move(top)}});
  }
  return {{"content", std::move(content)}};
}

json completion_logprobs(const ResponseHead& head, std::span<const StreamToken> tokens,
                         std::int64_t offset) {
  json pieces = json::array(), logprobs = json::array(), tops = json::array(),
       offsets = json::array();
  for (const StreamToken& t : tokens) {
    if (t.id < 0) continue;
    pieces.push_back(t.piece);
    logprobs.push_back(t.logprob);
    json top = json::object();
    for (std::size_t i = 0; i < t.top.size() && i < static_cast<std::size_t>(head.top_logprobs);
         ++i) {
      top[t.top[i].first] = t.top[i].second;
    }
    tops.push_back(std::move(top));
    offsets.push_back(offset);
    offset += static_cast<std::int64_t>(t.text.size());
  }
  return {{"tokens", std::move(pieces)},
          {"token_logprobs", std::move(logprobs)},
          {"top_logprobs", std::move(tops)},
          {"text_offset", std::move(offsets)}};
}

json choice(const ResponseHead& head, const std::string& text, std::span<const StreamToken> tokens,
            std::int64_t offset, std::optional<FinishReason> finish) {
  json c = {{"index", 0}, {"logprobs", logprobs_json(head, tokens, offset)}};
  c["finish_reason"] = finish ? json(finish_reason_text(*finish)) : json(nullptr);
  if (head.endpoint == ApiEndpoint::Completion) c["text"] = text;
  return c;
}

}  // namespace

std::string finish_reason_text(FinishReason reason) {
  return reason == FinishReason::Length || reason == FinishReason::ContextFull ? "length" : "stop";
}

json usage_json(std::int64_t prompt_tokens, std::int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

json logprobs_json(const ResponseHead& head, std::span<const StreamToken> tokens,
                   std::int64_t text_offset) {
  if (!head.logprobs) return nullptr;
  return head.endpoint == ApiEndpoint::Chat ? chat_logprobs(head, tokens)
                                            : completion_logprobs(head, tokens, text_offset);
}

json completion_json(const ResponseHead& head, const std::string& text,
                     std::span<const StreamToken> tokens, FinishReason reason,
                     std::int64_t prompt_tokens) {
  json c = choice(head, text, tokens, 0, reason);
  if (head.endpoint == ApiEndpoint::Chat) {
    c["message"] = {{"role", "assistant"}, {"content", text}};
  }
  std::int64_t generated = 0;
  for (const StreamToken& t : tokens) generated += t.id >= 0 ? 1 : 0;
  return {{"id", head.id},
          {"object", head.endpoint == ApiEndpoint::Chat ? "chat.completion" : "text_completion"},
          {"created", head.created},
          {"model", head.model},
          {"choices", json::array({std::move(c)})},
          {"usage", usage_json(prompt_tokens, generated)}};
}

json chunk_json(const ResponseHead& head, const std::string& text,
                std::span<const StreamToken> tokens, std::int64_t text_offset, bool first,
                std::optional<FinishReason> finish) {
  json c = choice(head, text, tokens, text_offset, finish);
  if (head.endpoint == ApiEndpoint::Chat) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || (first && !finish)) delta["content"] = text;
    c["delta"] = std::move(delta);
  }
  return {
      {"id", head.id},
      {"object", head.endpoint == ApiEndpoint::Chat ? "chat.completion.chunk" : "text_completion"},
      {"created", head.created},
      {"model", head.model},
      {"choices", json::array({std::move(c)})}};
}

json usage_chunk_json(const ResponseHead& head, std::int64_t prompt_tokens,
                      std::int64_t completion_tokens) {
  return {
      {"id", head.id},
      {"object", head.endpoint == ApiEndpoint::Chat ? "chat.completion.chunk" : "text_completion"},
      {"created", head.created},
      {"model", head.model},
      {"choices", json::array()},
      {"usage", usage_json(prompt_tokens, completion_tokens)}};
}

std::string sse_event(const json& value) {
  return "data: " + dump(value) + "\n\n";
}

}  // namespace kvscope::serve
