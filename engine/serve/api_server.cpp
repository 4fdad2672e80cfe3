#include "serve/api_server.h"

#include <algorithm>
#include <thread>

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "run/engine.h"
#include "serve/api_error.h"
#include "serve/api_request.h"
#include "serve/engine_call.h"
#include "serve/guarded_server.h"
#include "serve/request_stream.h"
#include "serve/snapshot_json.h"
#include "util/error.h"

namespace kvscope::serve {

namespace {

using nlohmann::json;

void answer_json(httplib::Response& res, const json& value, int status = 200) {
  res.status = status;
  res.set_content(value.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// Compares in time independent of where the strings differ.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

HttpLimits guard_limits(const ServerOptions& o) {
  HttpLimits limits = o.limits;
  limits.max_body_bytes = o.max_body_bytes;
  limits.max_connections_per_client =
      std::clamp(limits.max_connections_per_client, 1, std::max(1, o.http_threads / 2));
  return limits;
}

std::int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ApiServer::ApiServer(EngineHost& host, ServedModel model, ServerOptions options)
    : host_(host),
      model_(std::move(model)),
      options_(std::move(options)),
      http_(std::make_unique<GuardedServer>(
          guard_limits(options_), [this](int status) { metrics_.request_rejected(status); })) {
  const int threads = options_.http_threads;
  http_->new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<std::size_t>(threads));
  };
  http_->set_keep_alive_max_count(1000);
  http_->set_keep_alive_timeout(5);
  // A client that stops reading holds its own thread at most this long, never the engine's.
  http_->set_write_timeout(10, 0);
  routes();
}

ApiServer::~ApiServer() {
  stop();
}

int ApiServer::bind() {
  int port = options_.port;
  if (port == 0) {
    port = http_->bind_to_any_port(options_.host);
  } else if (!http_->bind_to_port(options_.host, port)) {
    port = -1;
  }
  if (port > 0) static_cast<GuardedServer&>(*http_).widen_backlog();
  if (port <= 0) {
    throw_error<UsageError>(
        "cannot listen on {}:{} (address in use, or not an address of "
        "this machine)",
        options_.host, options_.port);
  }
  return port;
}

void ApiServer::run() {
  {
    std::lock_guard lock(run_mutex_);
    if (stop_requested_) return;
    listening_ = true;
  }
  http_->listen_after_bind();
  listening_ = false;
}

void ApiServer::stop() {
  {
    std::lock_guard lock(run_mutex_);
    stop_requested_ = true;
    if (!listening_) return;  // run() has not begun: it sees the request and returns
  }
  // run() is entering listen_after_bind(), which marks the server running within a few
  // instructions; httplib's stop() before that would be lost.
  while (listening_ && !http_->is_running()) std::this_thread::yield();
  http_->stop();
}

void ApiServer::answer_error(httplib::Response& res, const ApiError& error) {
  metrics_.request_rejected(error.status());
  res.status = error.status();
  res.set_content(error.body(), "application/json");
}

bool ApiServer::authorized(const httplib::Request& req, httplib::Response& res) {
  if (options_.api_key.empty()) return true;
  const std::string auth = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (auth.rfind(prefix, 0) == 0 && same_secret(auth.substr(prefix.size()), options_.api_key)) {
    return true;
  }
  answer_error(res, ApiError(401, "authentication_error",
                             auth.empty() ? "this server needs an API key: send "
                                            "'Authorization: Bearer KEY'"
                                          : "the API key is not this server's"));
  return false;
}

void ApiServer::routes() {
  // Every handler's errors leave as OpenAI-shaped JSON; anything unexpected is a 500 that
  // says what happened rather than a dropped connection.
  auto guarded = [this](auto handler) {
    return [this, handler](const httplib::Request& req, httplib::Response& res) {
      try {
        if (req.path != "/health" && !authorized(req, res)) return;
        handler(req, res);
      } catch (const ApiError& e) {
        answer_error(res, e);
      } catch (const std::exception& e) {
        answer_error(res, ApiError(500, "server_error", e.what()));
      }
    };
  };
  http_->Post("/v1/chat/completions", guarded([this](const auto& req, auto& res) {
                generate(req, res, static_cast<int>(ApiEndpoint::Chat));
              }));
  http_->Post("/v1/completions", guarded([this](const auto& req, auto& res) {
                generate(req, res, static_cast<int>(ApiEndpoint::Completion));
              }));
  http_->Get("/v1/models", guarded([this](const auto&, auto& res) {
               json m = {{"id", model_.id},
                         {"object", "model"},
                         {"created", unix_seconds()},
                         {"owned_by", "kvscope"},
                         {"max_model_len", model_.context_length}};
               answer_json(res, {{"object", "list"}, {"data", json::array({m})}});
             }));
  http_->Get("/health", guarded([this](const auto&, auto& res) {
               if (host_.alive()) {
                 answer_json(res, {{"status", "ok"}});
               } else {
                 answer_error(res, ApiError(503, "server_error", "the engine is not running"));
               }
             }));
  http_->Get("/metrics", guarded([this](const auto&, auto& res) { metrics_text(res); }));
  http_->Post("/tokenize", guarded([this](const auto& req, auto& res) { tokenize(req, res); }));
  http_->Post("/detokenize", guarded([this](const auto& req, auto& res) { detokenize(req, res); }));
  http_->Get("/v1/kvscope/snapshot",
             guarded([this](const auto& req, auto& res) { snapshot(req, res); }));
  http_->Post("/v1/kvscope/release_prefixes",
              guarded([this](const auto&, auto& res) { release_prefixes(res); }));
  http_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    // Routing misses (404, 405), the body limit (413) and requests httplib could not read
    // (400: a malformed request line, a body that did not arrive in time) in the same shape.
    if (!res.body.empty()) return;
    std::string message;
    if (res.status == 413) {
      message = "the request body is larger than this server accepts";
    } else if (res.status == 404 || res.status == 405) {
      message = fmt::format("no endpoint {} {:.200}", req.method, req.path);
    } else {
      message = fmt::format(
          "the request could not be read (HTTP status {}): a malformed "
          "request line or header, or a body that did not arrive in time",
          res.status);
    }
    res.set_content(ApiError(res.status, "invalid_request_error", message).body(),
                    "application/json");
  });
}

// {"content": TEXT} (llama-server) or {"prompt": TEXT} (vLLM); "add_special" (default true)
// adds BOS where the model asks for it.
void ApiServer::tokenize(const httplib::Request& req, httplib::Response& res) {
  const json body = parse_json_body(req.body);
  if (!body.is_object()) throw bad_request("the body must be a JSON object");
  const auto text = body.find(body.contains("content") ? "content" : "prompt");
  if (text == body.end() || !text->is_string()) {
    throw bad_request("'content' (or 'prompt') must be a string", "content");
  }
  bool add_special = true;
  if (auto it = body.find("add_special"); it != body.end()) {
    if (!it->is_boolean()) throw bad_request("'add_special' must be true or false", "add_special");
    add_special = it->get<bool>();
  }
  // Tokenized here, not on the engine thread (as Engine::tokenize).
  const std::shared_ptr<const Tokenizer> tokenizer =
      call_on_engine(host_, [](Engine& e) { return e.shared_tokenizer(); });
  std::vector<TokenId> ids;
  try {
    ids = tokenizer->encode(text->get_ref<const std::string&>(),
                            add_special && tokenizer->add_bos_default());
  } catch (const Error& e) {
    throw bad_request(e.what(), "content");
  }
  answer_json(res,
              {{"tokens", ids}, {"count", ids.size()}, {"max_model_len", model_.context_length}});
}

// {"tokens": [ids]}: every id checked against the vocabulary before it is spelled.
void ApiServer::detokenize(const httplib::Request& req, httplib::Response& res) {
  const json body = parse_json_body(req.body);
  const auto tokens = body.is_object() ? body.find("tokens") : body.end();
  if (tokens == body.end() || !tokens->is_array()) {
    throw bad_request("'tokens' must be an array of token ids", "tokens");
  }
  std::vector<TokenId> ids;
  for (const json& t : *tokens) {
    if (!t.is_number_integer()) throw bad_request("'tokens' must hold integers only", "tokens");
    const double v = t.get<double>();
    if (v < 0 || v > 2147483647.0) {
      throw bad_request(fmt::format("token id {} is out of range", t.dump()), "tokens");
    }
    ids.push_back(t.get<TokenId>());
  }
  const std::string text = call_on_engine(host_, [ids](Engine& e) {
    const std::int64_t vocab = e.tokenizer().vocab_size();
    for (const TokenId id : ids) {
      if (id >= vocab) {
        throw bad_request(fmt::format("token id {} is outside the vocabulary (size {})", id, vocab),
                          "tokens");
      }
    }
    return e.tokenizer().decode(ids);
  });
  answer_json(res, {{"content", text}});
}

std::vector<std::pair<std::int64_t, RequestId>> ApiServer::active_requests() {
  std::vector<std::pair<std::int64_t, RequestId>> active;
  std::lock_guard lock(active_mutex_);
  for (const auto& [n, weak] : active_) {
    if (const auto stream = weak.lock()) active.emplace_back(n, stream->request());
  }
  return active;
}

void ApiServer::snapshot(const httplib::Request& req, httplib::Response& res) {
  const bool blocks = req.get_param_value("blocks") == "1";
  const auto active = active_requests();
  json out = call_on_engine(host_, [blocks, active](Engine& e) {
    json s = snapshot_json(e.snapshot(), blocks);
    // "API #n": the sequence of each request being answered (-1 while it waits).
    json requests = json::array();
    for (const auto& [n, id] : active) {
      requests.push_back(
          {{"api", n}, {"request", id}, {"sequence", id > 0 ? e.scheduler().sequence_of(id) : -1}});
    }
    s["api_requests"] = std::move(requests);
    s["scheduler"] = {{"running", e.scheduler().n_running()},
                      {"waiting", e.scheduler().n_waiting()},
                      {"kept_prefixes", e.scheduler().n_kept()},
                      {"preemptions", e.scheduler().stats().preemptions},
                      {"reused_tokens", e.scheduler().stats().reused_tokens}};
    return s;
  });
  out["server"] = {{"model", model_.id}, {"clients", metrics_.connections()}};
  answer_json(res, out);
}

// Lets go of every kept prefix: with no request running, the pool is then empty.
void ApiServer::release_prefixes(httplib::Response& res) {
  const json out = call_on_engine(host_, [](Engine& e) {
    const std::int64_t n = e.scheduler().n_kept();
    e.release_all_caches();
    return json{{"released", n}, {"blocks_in_use", e.snapshot().n_used}};
  });
  answer_json(res, out);
}

void ApiServer::metrics_text(httplib::Response& res) {
  const EngineGauges gauges = call_on_engine(host_, [](Engine& e) { return read_gauges(e); });
  res.set_content(metrics_.text(gauges, model_.id), "text/plain; version=0.0.4");
}

}  // namespace kvscope::serve
