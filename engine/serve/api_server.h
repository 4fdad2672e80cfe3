// ApiServer: the OpenAI-compatible HTTP server (cpp-httplib) in front of one engine-owning
// thread (EngineHost). Endpoints:
//   POST /v1/chat/completions, /v1/completions   (stream true: SSE chunks, then [DONE])
//   GET  /v1/models, /health, /metrics (Prometheus), /v1/kvscope/snapshot[?blocks=1]
//   POST /tokenize, /detokenize, /v1/kvscope/release_prefixes
// Each HTTP request is served on a thread of the server's pool; generation requests are
// queued to the engine thread and join its running batch, their tokens coming back through
// a RequestStream. A client that goes away mid-stream has its request cancelled (it ends at
// the engine's next step and its blocks are freed). Ended requests keep their cache as a
// prefix later requests share (the scheduler's kept prefixes, evicted least recently used
// first when blocks run short).
//
// Safe defaults: loopback only, optional Bearer key (every endpoint but /health), a body
// size limit, JSON validated before use, errors in OpenAI's shape. Clients are served
// through GuardedServer: a request's head and body must arrive within HttpLimits' sizes and
// times, and one address holds at most a share of the HTTP threads. A prompt is rendered and
// tokenized on its HTTP thread, never on the engine's, so a large request delays no other.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "run/request.h"
#include "serve/api_request.h"
#include "serve/engine_host.h"
#include "serve/request_head.h"
#include "serve/server_metrics.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace kvscope::serve {

class RequestStream;
struct PromptTokenizer;

struct ServedModel {
  std::string id;  // the "model" clients name (the file's name without .gguf)
  std::int64_t context_length = 0;
  // What a request's omitted sampling fields take (openai_sampling_defaults() with the
  // model's generation_config.json over it).
  SamplingParams sampling_defaults = openai_sampling_defaults();
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                        // 0: a free port, chosen by the system
  std::string api_key;                    // "" = no key asked
  std::size_t max_body_bytes = 4u << 20;  // larger bodies get 413
  int http_threads = 64;                  // concurrent connections served
  // Header sizes and read times; max_connections_per_client is taken at most
  // http_threads / 2, so that other clients always find a thread.
  HttpLimits limits;
};

class ApiServer {
 public:
  ApiServer(EngineHost& host, ServedModel model, ServerOptions options);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds the socket; returns the port (the chosen one for port 0). Throws UsageError when
  // the address cannot be bound.
  int bind();
  // Serves until stop() (from another thread or a signal handler's helper thread). A stop
  // requested before run() makes run() return at once.
  void run();
  void stop();

  const ServerMetrics& metrics() const { return metrics_; }
  const ServedModel& model() const { return model_; }
  // The generation requests being answered now (any thread): (n of "API #n", the engine's
  // request id, 0 until the engine has accepted it).
  std::vector<std::pair<std::int64_t, RequestId>> active_requests();

 private:
  void routes();
  bool authorized(const httplib::Request& req, httplib::Response& res);
  void generate(const httplib::Request& req, httplib::Response& res, int endpoint);
  void tokenize(const httplib::Request& req, httplib::Response& res);
  void detokenize(const httplib::Request& req, httplib::Response& res);
  void snapshot(const httplib::Request& req, httplib::Response& res);
  void release_prefixes(httplib::Response& res);
  void metrics_text(httplib::Response& res);
  void answer_error(httplib::Response& res, const class ApiError& error);

  // Generation requests being answered, by their number n ("API #n", the n of "cmpl-n"),
  // so the snapshot can say which sequence serves which request.
  std::shared_ptr<void> track(std::int64_t n, const std::shared_ptr<RequestStream>& stream);
  // The engine's tokenizer as last seen (fetched from the engine thread the first time, or
  // with `renew` after a submit found that the engine has another model).
  std::shared_ptr<const PromptTokenizer> prompt_tokenizer(bool renew);

  EngineHost& host_;
  ServedModel model_;
  ServerOptions options_;
  ServerMetrics metrics_;
  std::unique_ptr<httplib::Server> http_;
  // httplib's own stop() does nothing until listening has begun: a stop asked for before
  // that is remembered here, for run() to see.
  std::mutex run_mutex_;
  bool stop_requested_ = false;         // guarded by run_mutex_
  std::atomic<bool> listening_{false};  // run() is in (or entering) httplib's listen
  std::atomic<std::int64_t> next_id_{1};
  std::mutex active_mutex_;
  std::map<std::int64_t, std::weak_ptr<RequestStream>> active_;
  std::mutex prompt_mutex_;
  std::shared_ptr<const PromptTokenizer> prompt_tokenizer_;  // guarded by prompt_mutex_
};

}  // namespace kvscope::serve
