// `kvscope-cli serve`: the OpenAI-compatible HTTP server (engine/serve) on a model. One
// thread owns the engine (EngineThread); the HTTP pool's threads hand it requests. Prints
// one line "listening on http://HOST:PORT ..." once it accepts connections (with --port 0,
// the port the system chose), and stops cleanly on SIGINT / SIGTERM.
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include <pthread.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/engine_args.h"
#include "run/engine.h"
#include "run/model_sampling.h"
#include "serve/api_server.h"
#include "serve/engine_thread.h"

namespace kvscope::cli {

namespace {

// The name clients send as "model": the file's name without its extension, or the folder's.
std::string model_id(const std::string& path) {
  std::filesystem::path p(path);
  while (!p.empty() && p.filename().empty()) p = p.parent_path();  // "dir/" -> "dir"
  return p.extension() == ".gguf" ? p.stem().string() : p.filename().string();
}

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

}  // namespace

int cmd_serve(const Args& args) {
  ArgParser p("serve", "-m MODEL [--host 127.0.0.1] [--port 8080] [--api-key KEY] [-np N]");
  declare_engine_options(p);
  p.option({"--host"}, "address to listen on (default 127.0.0.1: this computer only)");
  p.option({"--port"}, "port (default 8080; 0: a free one, printed)");
  p.option({"--api-key"}, "clients must send 'Authorization: Bearer KEY'");
  p.option({"-np", "--parallel"},
           "sequences decoded together; the KV pool holds this many full contexts unless "
           "--kv-budget/--memory say otherwise (default 4)");
  p.option({"--alias"}, "the model name clients use (default: the file name without .gguf)");
  p.option({"--http-threads"}, "connections served at once (default 64)");
  p.option({"--max-body"}, "largest request body in bytes (default 4194304)");
  p.option({"--max-client-connections"},
           "connections one client address may hold at once, more are answered 503 "
           "(default 32, at most half of --http-threads)");
  if (!p.parse(args)) return 0;

  serve::ServerOptions server;
  server.host = p.get_or("--host", "127.0.0.1");
  server.port = static_cast<int>(p.get_int("--port", 8080, 0, 65535));
  server.api_key = p.get_or("--api-key", "");
  server.http_threads = static_cast<int>(p.get_int("--http-threads", 64, 4, 1024));
  server.max_body_bytes =
      static_cast<std::size_t>(p.get_int("--max-body", 4 << 20, 1024, std::int64_t{1} << 30));
  server.limits.max_connections_per_client =
      static_cast<int>(p.get_int("--max-client-connections", 32, 1, 512));
  EngineOptions options = engine_options(p);
  const std::int64_t parallel = p.get_int("-np", 4, 1, 1024);
  options.scheduler.max_running = parallel;
  options.default_sequences = parallel;
  const std::string path = p.required("-m");

#if defined(__GLIBC__)
  // Each HTTP thread would take a malloc arena of its own, and what a large request (a 4 MB
  // prompt, 100,000 messages) freed there stayed resident even after malloc_trim: two
  // stories260K rounds of both kept 77 MiB with glibc's default, 3 MiB with two arenas.
  mallopt(M_ARENA_MAX, 2);
#endif
  // SIGINT/SIGTERM are taken by one waiting thread (every thread started below inherits the
  // blocked mask); a client that goes away must not end the process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto engine = std::make_unique<Engine>(path, options);
  if (!engine->backend_note().empty()) fmt::print(stderr, "note: {}\n", engine->backend_note());
  serve::ServedModel model{p.get_or("--alias", model_id(path)), engine->context_length()};
  // As vLLM: what the model publishes (generation_config.json) over OpenAI's defaults.
  const SamplingDefaults& published = engine->model().sampling_defaults();
  model.sampling_defaults = with_model_defaults(published, serve::openai_sampling_defaults());
  if (published.any()) {
    fmt::print(stderr, "note: requests that omit sampling fields take {}'s values\n",
               published.source);
  }
  serve::EngineThread host(std::move(engine));
  serve::ApiServer api(host, model, server);
  const int port = api.bind();
  if (!is_loopback(server.host)) {
    fmt::print(stderr, "warning: listening on {}: other computers can reach this server{}\n",
               server.host, server.api_key.empty() ? ", and it asks no API key" : "");
  }
  // On a signal the engine stops first, so every HTTP thread waiting on it answers at once
  // (503) and the server's stop does not wait for running requests to finish.
  std::thread waiter([&api, &host, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    host.stop();
    api.stop();
  });
  fmt::print("kvscope-cli serve: listening on http://{}:{} (model {}, context {}, parallel {})\n",
             server.host, port, model.id, model.context_length, parallel);
  std::fflush(stdout);
  api.run();
  pthread_kill(waiter.native_handle(), SIGTERM);  // when run() ended on its own
  waiter.join();
  host.stop();
  host.join();  // no engine callback runs after this: `api` (their metrics) may go
  if (!host.error().empty()) {
    fmt::print(stderr, "kvscope-cli serve: the engine stopped: {}\n", host.error());
    return 1;
  }
  fmt::print("kvscope-cli serve: stopped\n");
  return 0;
}

}  // namespace kvscope::cli
