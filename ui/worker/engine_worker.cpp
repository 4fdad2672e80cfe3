#include "worker/engine_worker.h"

#include <QFileInfo>
#include <QMetaObject>

#include <exception>
#include <utility>

#include "plan/layer_split_plan.h"
#include "text/chat_template.h"
#include "util/error.h"
#include "worker/builtin_model.h"

namespace kvscope::ui {

EngineWorker::EngineWorker(QString demo_folder, std::shared_ptr<const LoadCancel> cancel,
                           QObject* parent)
    : QObject(parent), demo_folder_(std::move(demo_folder)), cancel_(std::move(cancel)) {
  register_engine_metatypes();
}

// Runs on the worker's thread (deleted there when the thread finishes): the engine, its
// backend threads and the KV pool go with it.
EngineWorker::~EngineWorker() {
  open_host(false);
}

void EngineWorker::loadModel(const LoadRequest& request) {
  // First, so two models never hold memory at once.
  drop_engine(FinishReason::Cancelled, tr("the model was unloaded"));
  // Cancelled: a newer load is queued, or the app is quitting; either way nothing to restore.
  if (load(request) != LoadResult::Failed) return;
  if (last_good_) {
    LoadRequest previous = *last_good_;
    previous.generation = 0;  // stopped only by quitting, not by the request that failed
    last_good_.reset();
    load(previous);
  }
}

EngineWorker::LoadResult EngineWorker::load(const LoadRequest& request) {
  const bool demo = request.path.isEmpty();
  emit modelLoading(demo ? builtin_model_label() : request.path);
  QString path = request.path;
  try {
    EngineOptions options = request.options;
    if (cancel_) {
      options.cancel_load = [cancel = cancel_, generation = request.generation] {
        return cancel->quitting || (generation != 0 && cancel->latest != generation);
      };
    }
    if (demo) {
      path = ensure_builtin_model(demo_folder_);
      options = builtin_engine_options(std::move(options));
    }
    engine_ = std::make_unique<Engine>(path.toStdString(), std::move(options));
  } catch (const CancelledError&) {
    engine_.reset();
    return LoadResult::Cancelled;
  } catch (const std::exception& e) {
    engine_.reset();
    emit modelFailed(tr("Cannot load %1:\n%2").arg(path, QString::fromUtf8(e.what())));
    return LoadResult::Failed;
  }
  files_ = FileSnapshot::take(path.toStdString());
  last_good_ = request;
  demo_ = demo;
  since_load_.start();
  last_frame_ms_ = -1;
  open_host(true);
  emit modelLoaded(model_info(path, demo));
  emit_frame(true);
  return LoadResult::Loaded;
}

void EngineWorker::submitChat(const ChatRequest& request) {
  const ChatId chat = request.chat;
  if (auto it = replies_.find(chat); it != replies_.end()) drop_reply(it);
  if (engine_ && !model_files_unchanged()) {
    emit replyFinished({chat, FinishReason::Error, files_changed_, 0, 0});
    return;
  }
  if (!engine_) {
    emit replyFinished({chat, FinishReason::Error, tr("no model is loaded"), 0, 0});
    return;
  }
  Reply reply;
  reply.ticket = next_ticket_++;
  try {
    GenerationRequest gen;
    gen.prompt = engine_->tokenize_chat(request.messages);
    gen.sampling = request.sampling;
    gen.max_tokens = request.max_tokens;
    gen.stop_strings = engine_->chat_stop_strings();
    // The demo's end-of-text token is as random as the rest of its output: its replies
    // run to their length, so the panel always has a cache to show.
    gen.stop_at_end_of_generation = !demo_;
    gen.keep_cache = true;
    reply.prompt_tokens = static_cast<std::int64_t>(gen.prompt.size());
    RequestCallbacks cb;
    const std::uint64_t ticket = reply.ticket;
    cb.on_token = [this, chat, ticket](const TokenEvent& e) { on_token(chat, ticket, e); };
    cb.on_finish = [this, chat, ticket](const RequestResult& r) { on_finish(chat, ticket, r); };
    reply.request = engine_->submit(std::move(gen), std::move(cb));
  } catch (const std::exception& e) {
    emit replyFinished({chat, FinishReason::Error, QString::fromUtf8(e.what()), 0, 0});
    return;
  }
  const std::int64_t prompt_tokens = reply.prompt_tokens;
  replies_.emplace(chat, std::move(reply));
  emit replyStarted(chat, prompt_tokens);
  set_busy(true);
  post_step();
}

void EngineWorker::stopChat(ChatId chat) {
  auto it = replies_.find(chat);
  if (it == replies_.end() || !engine_) return;
  engine_->cancel(it->second.request);
  post_step();
}

void EngineWorker::forgetChat(ChatId chat) {
  if (auto it = replies_.find(chat); it != replies_.end()) drop_reply(it);
  if (auto it = kept_.find(chat); it != kept_.end()) {
    if (engine_) engine_->release_cache(it->second);
    kept_.erase(it);
  }
  if (engine_) emit_frame(true);
}

// Ends a reply nobody waits for any more (Cancelled, its text kept by the chat). The engine
// ends it at its next step, keeping its cache as asked: that is released after the step.
void EngineWorker::drop_reply(std::map<ChatId, Reply>::iterator it) {
  const ReplyFinished done{
      it->first, FinishReason::Cancelled, {}, it->second.prompt_tokens, it->second.generated};
  if (engine_) {
    engine_->cancel(it->second.request);
    release_after_step_.push_back(it->second.request);
    post_step();
  }
  replies_.erase(it);
  emit replyFinished(done);
}

void EngineWorker::checkPlan() {
  if (!engine_) {
    emit planCheckFailed(tr("Load a model first: the check runs on the loaded engine."));
    return;
  }
  if (!replies_.empty() || !engine_->idle()) {
    emit planCheckFailed(tr("Wait for the replies to finish: the check needs the whole cache."));
    return;
  }
  try {
    const PlanCheck check = check_plan(*engine_);
    kept_.clear();  // check_plan released every kept cache
    emit planCheckDone(check);
  } catch (const std::exception& e) {
    emit planCheckFailed(QString::fromUtf8(e.what()));
  }
  emit_frame(true);
}

void EngineWorker::setPanelEnabled(bool enabled) {
  panel_enabled_ = enabled;
  if (enabled) emit_frame(true);
}

void EngineWorker::releaseKeptCaches() {
  if (!engine_) return;
  engine_->release_all_caches();
  kept_.clear();
  emit_frame(true);
}

bool EngineWorker::post(serve::EngineTask task) {
  std::lock_guard lock(host_mutex_);
  if (!host_open_) return false;
  tasks_.push_back(std::move(task));
  if (!tasks_posted_) {
    tasks_posted_ = true;
    QMetaObject::invokeMethod(this, &EngineWorker::run_tasks, Qt::QueuedConnection);
  }
  return true;
}

void EngineWorker::setApiRequests(ApiRequests source) {
  std::lock_guard lock(host_mutex_);
  api_requests_ = std::move(source);
}

bool EngineWorker::alive() const {
  std::lock_guard lock(host_mutex_);
  return host_open_;
}

// Dropped tasks are never answered: their waiters see alive() false and give up.
void EngineWorker::open_host(bool open) {
  std::deque<serve::EngineTask> dropped;
  std::lock_guard lock(host_mutex_);
  host_open_ = open;
  if (!open) dropped.swap(tasks_);
}

// Between two steps (queued like them): the tasks posted since the last call, then steps
// for as long as the engine has work, API requests included.
void EngineWorker::run_tasks() {
  std::deque<serve::EngineTask> batch;
  {
    std::lock_guard lock(host_mutex_);
    tasks_posted_ = false;
    batch.swap(tasks_);
  }
  if (!engine_) return;
  // Tasks answer their own errors (RequestStream, promises); one that throws anyway has not
  // touched the scheduler mid-step, so the rest go on, and the user is told.
  for (serve::EngineTask& task : batch) {
    try {
      task(*engine_);
    } catch (const std::exception& e) {
      emit taskFailed(QString::fromUtf8(e.what()));
    }
  }
  if (!engine_->idle()) post_step();
}

void EngineWorker::post_step() {
  if (step_posted_) return;
  step_posted_ = true;
  QMetaObject::invokeMethod(this, &EngineWorker::run_step, Qt::QueuedConnection);
}

bool EngineWorker::model_files_unchanged() {
  const std::string change = files_.changed();
  if (change.empty()) return true;
  files_changed_ = QString::fromStdString(change);
  drop_engine(FinishReason::Error, files_changed_);
  emit modelFailed(
      tr("The model was unloaded: %1. Open it again to go on; the chats' text is kept.")
          .arg(files_changed_));
  return false;
}

void EngineWorker::run_step() {
  step_posted_ = false;
  if (!engine_ || !model_files_unchanged()) return;
  if (!speed_clock_.isValid()) {
    speed_clock_.start();
    speed_decode0_ = engine_->scheduler().stats().decode_tokens;
    speed_prompt0_ = engine_->scheduler().stats().prompt_tokens;
  }
  QElapsedTimer step_clock;
  step_clock.start();
  try {
    engine_->step();
  } catch (const std::exception& e) {
    // A failed forward step leaves the scheduler's state unknown: drop the engine rather
    // than run on it, and say so; the app keeps running and a model can be loaded again.
    const QString why = QString::fromUtf8(e.what());
    drop_engine(FinishReason::Error, why);
    emit modelFailed(tr("The engine stopped: %1\nLoad a model again.").arg(why));
    return;
  }
  step_ns_ += step_clock.nsecsElapsed();
  for (const RequestId id : release_after_step_) engine_->release_cache(id);
  release_after_step_.clear();
  flush_replies();
  const bool idle = engine_->idle();
  measure_speed(idle);
  emit_frame(idle);
  if (idle) {
    set_busy(false);
  } else {
    post_step();
  }
}

void EngineWorker::on_token(ChatId chat, std::uint64_t ticket, const TokenEvent& event) {
  auto it = replies_.find(chat);
  if (it == replies_.end() || it->second.ticket != ticket) return;
  Reply& r = it->second;
  if (event.token >= 0) ++r.generated;  // token -1 is held-back text released at the end
  r.pending += event.text;
}

void EngineWorker::on_finish(ChatId chat, std::uint64_t ticket, const RequestResult& result) {
  auto it = replies_.find(chat);
  if (it == replies_.end() || it->second.ticket != ticket) return;
  it->second.result = result;
}

// After a step: one text signal per chat that got text, progress for prompts still being
// processed, then the replies that ended (text always before the end).
void EngineWorker::flush_replies() {
  for (auto it = replies_.begin(); it != replies_.end();) {
    Reply& r = it->second;
    if (!r.pending.empty()) {
      emit replyText(it->first, QString::fromStdString(r.pending), r.generated);
      r.pending.clear();
    }
    if (r.result) {
      finish_reply(it->first, r);
      it = replies_.erase(it);
      continue;
    }
    if (r.generated == 0) report_progress(it->first, r);
    ++it;
  }
}

void EngineWorker::report_progress(ChatId chat, Reply& reply) {
  const SeqId seq = engine_->scheduler().sequence_of(reply.request);
  const KvCacheManager& kv = engine_->kv_cache();
  const std::int64_t done = seq >= 0 && kv.has_sequence(seq) ? kv.n_tokens(seq) : 0;
  if (done == reply.progress_reported) return;
  reply.progress_reported = done;
  emit promptProgress(chat, done, reply.prompt_tokens);
}

void EngineWorker::finish_reply(ChatId chat, const Reply& reply) {
  const RequestResult& r = *reply.result;
  ReplyFinished done;
  done.chat = chat;
  done.reason = r.reason;
  done.error = QString::fromStdString(r.error);
  done.prompt_tokens = r.prompt_tokens;
  done.generated_tokens = static_cast<std::int64_t>(r.generated.size());
  done.reused_tokens = r.reused_tokens;
  // This reply's cache replaces the one the chat kept before (which a regenerated reply
  // shared its prompt with until now).
  if (auto it = kept_.find(chat); it != kept_.end() && it->second != r.request) {
    engine_->release_cache(it->second);
  }
  kept_[chat] = r.request;
  emit replyFinished(done);
}

// The engine goes (a model switch, its files changed, a failed step): the replies in flight
// end with `reason` and `why`, the caches the chats kept and the host's queued tasks go
// with it.
void EngineWorker::drop_engine(FinishReason reason, const QString& why) {
  abandon_all(reason, why);
  kept_.clear();
  release_after_step_.clear();
  open_host(false);
  engine_.reset();
  set_busy(false);
}

// Ends every reply in flight with `reason`. The engine is about to go, so its own
// cancellation would never be delivered.
void EngineWorker::abandon_all(FinishReason reason, const QString& why) {
  auto replies = std::move(replies_);
  replies_.clear();
  for (auto& [chat, r] : replies) {
    if (!r.pending.empty()) {
      emit replyText(chat, QString::fromStdString(r.pending), r.generated);
    }
    emit replyFinished({chat, reason, why, r.prompt_tokens, r.generated});
  }
}

void EngineWorker::emit_frame(bool force) {
  if (!engine_ || !panel_enabled_) return;
  const qint64 now = since_load_.elapsed();
  if (!force && last_frame_ms_ >= 0 && now - last_frame_ms_ < frame_interval_ms_) return;
  last_frame_ms_ = now;
  QElapsedTimer clock;
  clock.start();
  PanelFrame frame;
  frame.cache = engine_->snapshot();
  // A split's sides are asked once: its device memory is its GPU's side (one device query
  // a frame, not two).
  frame.split = engine_->split_memory();
  frame.memory = frame.split ? split_device_memory(*frame.split) : engine_->memory_info();
  frame.seconds = static_cast<double>(now) / 1000.0;
  for (const auto& [chat, r] : replies_) {
    const SeqId seq = engine_->scheduler().sequence_of(r.request);
    if (seq >= 0) frame.owners[seq] = chat;
  }
  for (const auto& [chat, request] : kept_) {
    const SeqId seq = engine_->scheduler().sequence_of(request);
    if (seq >= 0) frame.owners[seq] = chat;
  }
  label_api_sequences(frame);
  frame_ns_ += clock.nsecsElapsed();
  emit frameReady(frame);
}

void EngineWorker::label_api_sequences(PanelFrame& frame) {
  ApiRequests source;
  {
    std::lock_guard lock(host_mutex_);
    source = api_requests_;
  }
  if (!source) return;
  const Scheduler& scheduler = engine_->scheduler();
  for (const auto& [n, request] : source()) {
    const SeqId seq = request > 0 ? scheduler.sequence_of(request) : -1;
    if (seq >= 0) {
      frame.api[seq] = n;
      ++frame.api_running;
    } else {
      ++frame.api_waiting;  // not accepted yet, or queued for blocks
    }
  }
}

void EngineWorker::measure_speed(bool going_idle) {
  const qint64 ms = speed_clock_.elapsed();
  if (ms < 1000 && !(going_idle && ms >= 200)) {
    if (going_idle) {
      speed_clock_.invalidate();
      step_ns_ = frame_ns_ = 0;
    }
    return;
  }
  const SchedulerStats& stats = engine_->scheduler().stats();
  const double seconds = static_cast<double>(ms) / 1000.0;
  SpeedSample s;
  s.decode_tokens_per_s = static_cast<double>(stats.decode_tokens - speed_decode0_) / seconds;
  s.prompt_tokens_per_s = static_cast<double>(stats.prompt_tokens - speed_prompt0_) / seconds;
  s.step_seconds = static_cast<double>(step_ns_) / 1e9;
  s.frame_seconds = static_cast<double>(frame_ns_) / 1e9;
  step_ns_ = frame_ns_ = 0;
  emit speedMeasured(s);
  speed_decode0_ = stats.decode_tokens;
  speed_prompt0_ = stats.prompt_tokens;
  if (going_idle) {
    speed_clock_.invalidate();
  } else {
    speed_clock_.restart();
  }
}

void EngineWorker::set_busy(bool busy) {
  if (busy == busy_) return;
  busy_ = busy;
  emit busyChanged(busy);
}

ModelInfo EngineWorker::model_info(const QString& path, bool demo) const {
  const ModelSpec& s = engine_->spec();
  ModelInfo info;
  info.path = path;
  info.demo = demo;
  info.name = demo ? builtin_model_label() : QFileInfo(path).fileName();
  info.context_length = engine_->context_length();
  info.block_size = engine_->kv_cache().config().block_size;
  const std::string_view family = template_family_name(engine_->template_family());
  info.template_name = QString::fromUtf8(family.data(), static_cast<qsizetype>(family.size()));
  info.device = devices_label(engine_->memory_info(), engine_->split_memory());
  info.backend_note = QString::fromStdString(engine_->backend_note());
  info.spec = s;
  info.weights = model_weights(engine_->model());
  LayerSplitRequest split;  // only its per-layer bytes: What fits splits the model with them
  split.plan.spec = s;
  set_model_layer_bytes(split, engine_->model());
  info.layer_weight_bytes = std::move(split.layer_bytes);
  info.embedding_weight_bytes = split.embedding_bytes;
  info.output_weight_bytes = split.output_bytes;
  const KvBlockLayout& layout = engine_->kv_cache().layout(0);
  info.k_dtype = layout.k_dtype;
  info.v_dtype = layout.v_dtype;
  // CUDA runs the model when its pool is on the device, and when a split gives it layers: a
  // split's backend keeps the CPU side's KV in host memory (uses_host_kv_storage() is true),
  // yet its first layers run on the GPU, so What fits plans the loaded model on the GPU.
  info.gpu_layers = engine_->split_gpu_layers();
  info.cuda = !engine_->backend().uses_host_kv_storage() || info.gpu_layers > 0;
  info.sampling_defaults = engine_->model().sampling_defaults();
  return info;
}

}  // namespace kvscope::ui
