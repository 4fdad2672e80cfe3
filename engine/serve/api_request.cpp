#include "serve/api_request.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "serve/api_error.h"

namespace kvscope::serve {

namespace {

using nlohmann::json;

const char* type_name(const json& v) {
  return v.type_name();
}

// The field when present and not null.
const json* field(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

double number(const json& body, const char* name, double fallback, double lo, double hi) {
  const json* v = field(body, name);
  if (!v) return fallback;
  if (!v->is_number()) {
    throw bad_request(fmt::format("'{}' must be a number, not {}", name, type_name(*v)), name);
  }
  const double x = v->get<double>();
  if (!(x >= lo && x <= hi)) {
    throw bad_request(fmt::format("'{}' must be in [{}, {}] (got {})", name, lo, hi, x), name);
  }
  return x;
}

std::int64_t integer(const json& body, const char* name, std::int64_t fallback, std::int64_t lo,
                     std::int64_t hi) {
  const json* v = field(body, name);
  if (!v) return fallback;
  if (!v->is_number_integer()) {
    throw bad_request(fmt::format("'{}' must be an integer, not {}", name, type_name(*v)), name);
  }
  // Unsigned values past int64 read as negative through get<int64_t>: range-check as double.
  const double x = v->get<double>();
  if (!(x >= static_cast<double>(lo) && x <= static_cast<double>(hi))) {
    throw bad_request(fmt::format("'{}' must be in [{}, {}] (got {})", name, lo, hi, v->dump()),
                      name);
  }
  return v->get<std::int64_t>();
}

bool boolean(const json& body, const char* name, bool fallback) {
  const json* v = field(body, name);
  if (!v) return fallback;
  if (!v->is_boolean()) {
    throw bad_request(fmt::format("'{}' must be true or false, not {}", name, type_name(*v)), name);
  }
  return v->get<bool>();
}

// A message's content: a string, or an array of {"type": "text", "text": "..."} parts.
std::string message_content(const json& content, std::size_t index) {
  const std::string param = fmt::format("messages[{}].content", index);
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw bad_request(fmt::format("'{}' must be a string or an array of text parts", param), param);
  }
  std::string text;
  for (const json& part : content) {
    const json* type = part.is_object() ? field(part, "type") : nullptr;
    const json* t = part.is_object() ? field(part, "text") : nullptr;
    if (!type || *type != "text" || !t || !t->is_string()) {
      throw bad_request(
          fmt::format("'{}' parts must be {{\"type\": \"text\", \"text\": STRING}}; this "
                      "server reads text only",
                      param),
          param);
    }
    text += t->get<std::string>();
  }
  return text;
}

std::vector<ChatMessage> messages(const json& body) {
  const json* v = field(body, "messages");
  if (!v) throw bad_request("'messages' is required", "messages");
  if (!v->is_array() || v->empty()) {
    throw bad_request("'messages' must be a non-empty array of {role, content}", "messages");
  }
  std::vector<ChatMessage> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& m = (*v)[i];
    const std::string param = fmt::format("messages[{}]", i);
    if (!m.is_object()) throw bad_request(fmt::format("'{}' must be an object", param), param);
    const json* role = field(m, "role");
    if (!role || !role->is_string()) {
      throw bad_request(fmt::format("'{}.role' must be a string", param), param + ".role");
    }
    std::string r = role->get<std::string>();
    if (r == "developer") r = "system";  // OpenAI's newer name for the system role
    if (r != "system" && r != "user" && r != "assistant") {
      throw bad_request(
          fmt::format("'{}.role' must be system, user or assistant (got \"{:.40}\")", param, r),
          param + ".role");
    }
    const json* content = field(m, "content");
    out.push_back({r, content ? message_content(*content, i) : std::string()});
  }
  return out;
}

std::string prompt(const json& body) {
  const json* v = field(body, "prompt");
  if (!v) throw bad_request("'prompt' is required", "prompt");
  if (v->is_string()) return v->get<std::string>();
  if (v->is_array() && v->size() == 1 && (*v)[0].is_string()) return (*v)[0].get<std::string>();
  throw bad_request("'prompt' must be a string (one prompt per request)", "prompt");
}

std::vector<std::string> stop_strings(const json& body) {
  const json* v = field(body, "stop");
  if (!v) return {};
  std::vector<std::string> out;
  if (v->is_string()) {
    out.push_back(v->get<std::string>());
  } else if (v->is_array() && v->size() <= kMaxStopStrings) {
    for (const json& s : *v) {
      if (!s.is_string()) throw bad_request("'stop' must hold strings only", "stop");
      out.push_back(s.get<std::string>());
    }
  } else {
    throw bad_request(
        fmt::format("'stop' must be a string or an array of at most {} strings", kMaxStopStrings),
        "stop");
  }
  for (const std::string& s : out) {
    if (s.empty()) throw bad_request("'stop' strings must not be empty", "stop");
  }
  return out;
}

// Chat: "logprobs": bool with "top_logprobs": 0..20. Completions: "logprobs": 0..5 (the
// number of alternatives; null for none).
void read_logprobs(const json& body, ApiRequest& r) {
  if (r.endpoint == ApiEndpoint::Chat) {
    r.logprobs = boolean(body, "logprobs", false);
    r.top_logprobs = static_cast<int>(integer(body, "top_logprobs", 0, 0, kMaxTopLogprobs));
    if (r.top_logprobs > 0 && !r.logprobs) {
      throw bad_request("'top_logprobs' needs 'logprobs': true", "top_logprobs");
    }
  } else if (field(body, "logprobs")) {
    r.logprobs = true;
    r.top_logprobs = static_cast<int>(integer(body, "logprobs", 0, 0, kMaxTopLogprobs));
  }
}

SamplingParams sampling(const json& body, bool& seeded, const SamplingParams& d) {
  SamplingParams s = d;
  s.temperature = static_cast<float>(number(body, "temperature", d.temperature, 0.0, 2.0));
  s.top_p = static_cast<float>(number(body, "top_p", d.top_p, 0.0, 1.0));
  s.top_k = static_cast<int>(integer(body, "top_k", d.top_k, 0, 1 << 24));
  s.min_p = static_cast<float>(number(body, "min_p", d.min_p, 0.0, 1.0));
  s.presence_penalty =
      static_cast<float>(number(body, "presence_penalty", d.presence_penalty, -2.0, 2.0));
  s.frequency_penalty =
      static_cast<float>(number(body, "frequency_penalty", d.frequency_penalty, -2.0, 2.0));
  s.repeat_penalty =
      static_cast<float>(number(body, "repetition_penalty", d.repeat_penalty, 0.01, 10.0));
  seeded = field(body, "seed") != nullptr;
  s.seed =
      static_cast<std::uint64_t>(integer(body, "seed", 0, std::numeric_limits<std::int64_t>::min(),
                                         std::numeric_limits<std::int64_t>::max()));
  return s;
}

}  // namespace

nlohmann::json parse_json_body(std::string_view body) {
  // The callback sees each value as it is parsed, with its depth: refuse before a deep
  // document is built (a million '[' would otherwise recurse a million times).
  const json::parser_callback_t limit_depth = [](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) {
      throw bad_request(
          fmt::format("the JSON body is nested deeper than {} levels", kMaxJsonDepth));
    }
    return true;
  };
  try {
    return json::parse(body.begin(), body.end(), limit_depth);
  } catch (const json::exception& e) {
    throw bad_request(fmt::format("the body is not valid JSON: {}", e.what()));
  }
}

SamplingParams openai_sampling_defaults() {
  SamplingParams s;
  s.temperature = 1.0f;
  s.top_k = 0;
  s.top_p = 1.0f;
  s.min_p = 0.0f;
  s.repeat_penalty = 1.0f;
  s.repeat_last_n = 64;  // the window of presence / frequency penalties
  return s;
}

ApiRequest parse_api_request(std::string_view text, ApiEndpoint endpoint,
                             const SamplingParams& defaults) {
  const json body = parse_json_body(text);
  if (!body.is_object()) throw bad_request("the body must be a JSON object");
  ApiRequest r;
  r.endpoint = endpoint;
  // Refused rather than ignored: a client asking for these would misread a plain answer.
  // (Empty lists, "none" and {"type": "text"} ask for nothing and pass.)
  for (const char* name : {"tools", "functions", "tool_choice", "response_format", "suffix"}) {
    const json* v = field(body, name);
    if (!v || (v->is_array() && v->empty()) || *v == "none" ||
        (v->is_object() && v->size() == 1 && v->value("type", "") == "text")) {
      continue;
    }
    throw bad_request(fmt::format("'{}' is not supported by this server", name), name);
  }
  if (const json* m = field(body, "model")) {
    if (!m->is_string()) throw bad_request("'model' must be a string", "model");
    r.model = m->get<std::string>();
  }
  if (endpoint == ApiEndpoint::Chat) {
    r.messages = messages(body);
  } else {
    r.prompt = prompt(body);
  }
  r.stream = boolean(body, "stream", false);
  if (const json* o = field(body, "stream_options")) {
    if (!o->is_object()) throw bad_request("'stream_options' must be an object", "stream_options");
    r.include_usage = boolean(*o, "include_usage", false);
  }
  const char* max_name =
      field(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  r.max_tokens = integer(body, max_name, 0, 1, std::int64_t{1} << 30);
  integer(body, "n", 1, 1, 1);  // one choice per request
  r.sampling = sampling(body, r.seeded, defaults);
  r.stop = stop_strings(body);
  read_logprobs(body, r);
  return r;
}

}  // namespace kvscope::serve
