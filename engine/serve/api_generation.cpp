// POST /v1/chat/completions and /v1/completions: the request is parsed, rendered and
// tokenized on the HTTP thread (a 4 MB prompt or 100,000 messages must not stall every
// other client's tokens), submitted on the engine thread, and followed on the HTTP thread
// through its RequestStream, answered whole or streamed as server-sent events. A client
// that goes away, streaming or not, has its request cancelled.
#include <httplib.h>

#include <chrono>
#include <memory>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "run/engine.h"
#include "serve/api_error.h"
#include "serve/api_request.h"
#include "serve/api_response.h"
#include "serve/api_server.h"
#include "serve/engine_call.h"
#include "serve/guarded_server.h"
#include "serve/request_stream.h"
#include "util/error.h"

namespace kvscope::serve {

// What tokenizing a prompt takes, handed from the engine thread to the HTTP threads: the
// tokenizer stays alive while it is held, even if the app loads another model meanwhile.
struct PromptTokenizer {
  std::shared_ptr<const Tokenizer> tokenizer;
  TemplateFamily family = TemplateFamily::Plain;
  std::int64_t context = 0;
  std::vector<std::string> chat_stops;
};

namespace {

// The type of the refusal a submit answers when the engine's tokenizer is not the one the
// prompt was tokenized with (another model was loaded): the HTTP thread tokenizes again.
constexpr const char* kModelChanged = "model_changed";

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr auto kPoll = std::chrono::milliseconds(200);
constexpr auto kKeepAlive = std::chrono::seconds(1);

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The token as the client sees it, spelled with the engine's tokenizer (engine thread).
StreamToken spell(const Engine& engine, const TokenEvent& ev) {
  StreamToken t;
  t.id = ev.token;
  t.text = ev.text;
  t.logprob = ev.logprob;
  if (ev.token >= 0) t.piece = engine.tokenizer().token_bytes(ev.token);
  for (const auto& [id, lp] : ev.top) t.top.emplace_back(engine.tokenizer().token_bytes(id), lp);
  return t;
}

// HTTP thread: the prompt's ids (as Engine::tokenize_chat / tokenize), checked against the
// context, and the request the engine runs.
GenerationRequest generation_request(const PromptTokenizer& t, const ApiRequest& r) {
  GenerationRequest gen;
  const bool chat = r.endpoint == ApiEndpoint::Chat;
  const char* param = chat ? "messages" : "prompt";
  try {
    gen.prompt = chat ? t.tokenizer->encode_parts(render_chat(t.family, r.messages, true),
                                                  t.tokenizer->add_bos_default())
                      : t.tokenizer->encode(r.prompt, t.tokenizer->add_bos_default());
  } catch (const Error& e) {
    throw bad_request(e.what(), param);
  }
  const auto n_prompt = static_cast<std::int64_t>(gen.prompt.size());
  const std::int64_t context = t.context;
  if (n_prompt == 0) throw bad_request("the prompt is empty", param);
  if (n_prompt >= context) {
    throw bad_request(fmt::format("this model's context is {} tokens and the prompt has {} "
                                  "tokens: shorten it below {}",
                                  context, n_prompt, context),
                      param);
  }
  gen.max_tokens = r.max_tokens > 0 ? r.max_tokens : context - n_prompt;
  gen.sampling = r.sampling;
  if (!r.seeded) gen.sampling.seed = std::random_device{}();
  gen.stop_strings = r.stop;
  if (chat) {
    for (const std::string& s : t.chat_stops) gen.stop_strings.push_back(s);
  }
  // The chosen token's log-probability comes with the top list: ask for at least one.
  gen.top_logprobs = r.logprobs ? std::max(1, r.top_logprobs) : 0;
  gen.keep_cache = true;
  return gen;
}

// Engine thread: check, submit. The callbacks feed the stream and the metrics; a cancelled
// request (its client went away) also gives its kept cache back, after the step.
void submit_on_engine(Engine& engine, EngineHost& host, ServerMetrics& metrics,
                      GenerationRequest gen, const Tokenizer* tokenized_by,
                      const std::shared_ptr<RequestStream>& stream, Clock::time_point arrival,
                      const char* param) {
  if (&engine.tokenizer() != tokenized_by) {
    stream->reject(ApiError(503, kModelChanged, "the model changed while the request was read"));
    return;
  }
  const auto n_prompt = static_cast<std::int64_t>(gen.prompt.size());
  // Owned by the callbacks: when the engine destroys them without having finished the
  // request (dropped with it), the stream still ends.
  auto guard = std::shared_ptr<RequestStream>(stream.get(),
                                              [keep = stream](RequestStream* s) { s->abandon(); });
  RequestCallbacks cb;
  cb.on_token = [&engine, &metrics, stream = guard, arrival,
                 last = std::optional<Clock::time_point>()](const TokenEvent& ev) mutable {
    if (ev.token >= 0) {
      const auto now = Clock::now();
      if (last) {
        metrics.next_token(seconds_between(*last, now));
      } else {
        metrics.first_token(seconds_between(arrival, now));
      }
      last = now;
    }
    stream->token(spell(engine, ev));
  };
  cb.on_finish = [&host, &metrics, stream = guard, arrival](const RequestResult& result) {
    metrics.request_finished(result, seconds_between(arrival, Clock::now()));
    if (result.reason == FinishReason::Cancelled) {
      const RequestId id = result.request;
      host.post([id](Engine& e) { e.release_cache(id); });
    }
    stream->finish(result);
  };
  try {
    const RequestId id = engine.submit(std::move(gen), std::move(cb));
    metrics.request_admitted(n_prompt);
    stream->start(id, n_prompt);
  } catch (const Error& e) {
    stream->reject(bad_request(e.what(), param));
  }
}

// The HTTP thread's view of one request.
struct Follow {
  std::shared_ptr<RequestStream> stream;
  ResponseHead head;
  bool include_usage = false;
  std::int64_t prompt_tokens = 0;
  std::vector<StreamToken> tokens;  // taken, not yet answered
  std::string text;                 // answered so far (streaming) or all (whole)
  std::int64_t generated = 0;
  std::optional<RequestResult> result;
  bool first_chunk = true;
  Clock::time_point last_write = Clock::now();
  std::shared_ptr<void> tracked;  // listed in the snapshot while this lives

  // One take: false when nothing came within kPoll.
  bool take() {
    StreamUpdate u = stream->take(kPoll);
    const bool any = !u.tokens.empty() || u.finished || u.started || u.rejected;
    if (u.rejected) throw *u.rejected;
    if (u.started) prompt_tokens = *u.started;
    for (StreamToken& t : u.tokens) tokens.push_back(std::move(t));
    if (u.finished) result = std::move(u.finished);
    return any;
  }
};

// Posted after the request's submit task, so it runs after it: the engine's id is known by
// then even when the HTTP thread has not seen it yet.
void cancel_on_engine(EngineHost& host, const Follow& f) {
  host.post([stream = f.stream](Engine& e) {
    if (const RequestId id = stream->request(); id > 0) e.cancel(id);
  });
}

// Waits until the engine has accepted (or refused) the request, so that a refusal is still
// answered with its status before any streamed byte.
void wait_started(EngineHost& host, Follow& f) {
  while (f.stream->request() == 0 && !f.result) {
    if (!f.take() && !host.alive()) {
      throw ApiError(503, "server_error", "the engine stopped before the request ran");
    }
  }
}

void throw_if_failed(const RequestResult& r) {
  if (r.reason == FinishReason::Error) throw ApiError(500, "server_error", r.error);
  if (r.reason == FinishReason::Cancelled) {
    throw ApiError(503, "server_error", "the request was cancelled (the server is stopping)");
  }
}

// The whole answer, or nothing when the client went away first (checked between takes, at
// most kPoll apart: its request is then cancelled by the caller, within a step).
std::optional<json> whole_response(EngineHost& host, Follow& f) {
  while (!f.result) {
    if (!f.take() && !host.alive()) {
      throw ApiError(503, "server_error", "the engine stopped while the request ran");
    }
    if (!f.result && GuardedServer::client_gone()) return std::nullopt;
  }
  throw_if_failed(*f.result);
  for (const StreamToken& t : f.tokens) f.text += t.text;
  return completion_json(f.head, f.text, f.tokens, f.result->reason, f.prompt_tokens);
}

// One call of the chunked content provider: writes what came (or a keep-alive comment after
// a silent second, which is also how a vanished client shows), true while the stream goes on.
bool stream_some(EngineHost& host, Follow& f, httplib::DataSink& sink) {
  auto write = [&](const std::string& s) {
    f.last_write = Clock::now();
    return sink.write(s.data(), s.size());
  };
  if (f.first_chunk && f.head.endpoint == ApiEndpoint::Chat) {
    f.first_chunk = false;
    if (!write(sse_event(chunk_json(f.head, "", {}, 0, true, std::nullopt)))) return false;
  }
  try {
    f.take();
  } catch (const ApiError& e) {  // the engine let go of the request
    write("data: " + e.body() + "\n\n");
    sink.done();
    return true;
  }
  if (!f.tokens.empty()) {
    std::string piece;
    for (const StreamToken& t : f.tokens) {
      piece += t.text;
      f.generated += t.id >= 0 ? 1 : 0;
    }
    const bool has_logprobs = f.head.logprobs && f.generated > 0;
    if (!piece.empty() || has_logprobs) {
      const json chunk = chunk_json(f.head, piece, f.tokens,
                                    static_cast<std::int64_t>(f.text.size()), false, std::nullopt);
      f.text += piece;
      if (!write(sse_event(chunk))) return false;
    }
    f.tokens.clear();
  }
  if (f.result) {
    const RequestResult& r = *f.result;
    if (r.reason == FinishReason::Error || r.reason == FinishReason::Cancelled) {
      const ApiError e(r.reason == FinishReason::Error ? 500 : 503, "server_error",
                       r.reason == FinishReason::Error ? r.error : "the request was cancelled");
      write("data: " + e.body() + "\n\n");
    } else {
      write(sse_event(chunk_json(f.head, "", {}, 0, false, r.reason)));
      if (f.include_usage) {
        write(sse_event(usage_chunk_json(f.head, f.prompt_tokens, f.generated)));
      }
    }
    write("data: [DONE]\n\n");
    sink.done();
    return true;
  }
  if (!host.alive()) return false;
  if (Clock::now() - f.last_write >= kKeepAlive) return write(": keep-alive\n\n");
  return true;
}

}  // namespace

std::shared_ptr<const PromptTokenizer> ApiServer::prompt_tokenizer(bool renew) {
  {
    std::lock_guard lock(prompt_mutex_);
    if (prompt_tokenizer_ && !renew) return prompt_tokenizer_;
  }
  // One hop to the engine thread (it waits for the step in progress), then none while the
  // model stays: every later request starts tokenizing at once.
  auto fresh = call_on_engine(host_, [](Engine& e) {
    return std::make_shared<const PromptTokenizer>(PromptTokenizer{
        e.shared_tokenizer(), e.chat_family(), e.context_length(), e.chat_stop_strings()});
  });
  std::lock_guard lock(prompt_mutex_);
  prompt_tokenizer_ = fresh;
  return fresh;
}

std::shared_ptr<void> ApiServer::track(std::int64_t n,
                                       const std::shared_ptr<RequestStream>& stream) {
  {
    std::lock_guard lock(active_mutex_);
    active_[n] = stream;
  }
  return std::shared_ptr<void>(nullptr, [this, n](void*) {
    std::lock_guard lock(active_mutex_);
    active_.erase(n);
  });
}

void ApiServer::generate(const httplib::Request& req, httplib::Response& res, int endpoint) {
  const Clock::time_point arrival = Clock::now();
  ApiRequest r =
      parse_api_request(req.body, static_cast<ApiEndpoint>(endpoint), model_.sampling_defaults);
  if (!r.model.empty() && r.model != model_.id) {
    throw ApiError(404, "invalid_request_error",
                   fmt::format("the model '{:.100}' does not exist: this server serves '{}'",
                               r.model, model_.id),
                   "model");
  }
  auto f = std::make_shared<Follow>();
  f->stream = std::make_shared<RequestStream>();
  const bool chat = r.endpoint == ApiEndpoint::Chat;
  const std::int64_t n = next_id_.fetch_add(1);
  f->tracked = track(n, f->stream);
  f->head = {r.endpoint,
             fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", n),
             std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count(),
             model_.id,
             r.logprobs,
             r.top_logprobs};
  f->include_usage = r.include_usage;
  const bool stream = r.stream;
  const char* param = chat ? "messages" : "prompt";
  metrics_.connection_opened();
  try {
    // Tokenized here with the tokenizer last seen; again (once) if the engine has another.
    for (int attempt = 0;; ++attempt) {
      if (attempt > 0) {
        f->stream = std::make_shared<RequestStream>();
        f->tracked.reset();  // (its release erases entry n: before the new one is made)
        f->tracked = track(n, f->stream);
      }
      const std::shared_ptr<const PromptTokenizer> tokenizer = prompt_tokenizer(attempt > 0);
      GenerationRequest gen = generation_request(*tokenizer, r);
      const bool posted = host_.post([this, gen = std::move(gen), by = tokenizer->tokenizer.get(),
                                      s = f->stream, arrival, param](Engine& e) mutable {
        submit_on_engine(e, host_, metrics_, std::move(gen), by, s, arrival, param);
      });
      if (!posted) throw ApiError(503, "server_error", "the engine is not running");
      try {
        wait_started(host_, *f);
        break;
      } catch (const ApiError& e) {
        if (e.type() != kModelChanged) throw;
        if (attempt > 0) throw ApiError(503, "server_error", e.what());
      }
    }
    r = ApiRequest();  // the messages go now (GuardedServer gives the memory back after)
    if (!stream) {
      const std::optional<json> body = whole_response(host_, *f);
      if (!body) {
        cancel_on_engine(host_, *f);
        metrics_.connection_closed();
        res.status = 499;  // nginx's "client closed request": nobody reads it
        return;
      }
      res.set_content(body->dump(-1, ' ', false, json::error_handler_t::replace),
                      "application/json");
      metrics_.connection_closed();
      return;
    }
  } catch (...) {
    cancel_on_engine(host_, *f);
    metrics_.connection_closed();
    throw;
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, f](std::size_t, httplib::DataSink& sink) { return stream_some(host_, *f, sink); },
      // Called once the stream ends, finished or not: a request whose client went away is
      // cancelled, ending at the engine's next step.
      [this, f](bool) {
        if (!f->result) cancel_on_engine(host_, *f);
        metrics_.connection_closed();
      });
}

}  // namespace kvscope::serve
