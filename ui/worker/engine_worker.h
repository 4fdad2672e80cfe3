// EngineWorker: the one object that owns the Engine. It lives on its own QThread (see
// EngineController) and is driven only by queued slot calls; it drives itself by posting
// one step at a time to its own event queue, so a queued stop, submit or model switch is
// handled between two steps, never more than one step late.
//
// Out of it come value types only (engine_messages.h): the text each step added to each
// chat (complete UTF-8, merged per step), how replies end, prompt progress, a panel frame
// at most every 100 ms (and one whenever the engine goes idle), and tokens/s about once
// a second.
//
// It is also the serve::EngineHost of the app's API server (engine/serve): HTTP threads post
// tasks, which run here between two steps with the same engine the chats use, so API
// requests join the chats' batch; the worker keeps stepping while any request is active.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "serve/engine_host.h"
#include "util/file_snapshot.h"
#include "worker/engine_messages.h"

namespace kvscope::ui {

class EngineWorker : public QObject, public serve::EngineHost {
  Q_OBJECT

 public:
  // `demo_folder`: where the demo model is written the first time it is needed.
  // `cancel` (shared with the EngineController) stops a load for a newer one or at quit;
  // without it loads run to the end.
  explicit EngineWorker(QString demo_folder, std::shared_ptr<const LoadCancel> cancel = {},
                        QObject* parent = nullptr);
  ~EngineWorker() override;

  // Minimum time between two panel frames while generating (default 100 ms; 0: a frame
  // after every step, for tests). Call before the worker is moved to its thread.
  void setFrameInterval(qint64 ms) { frame_interval_ms_ = ms; }

  // serve::EngineHost, from any thread. Tasks are refused (false) while no engine is
  // loaded; a model switch or an engine failure drops the queued ones, and the requests the
  // old engine was running end with it (the server answers them 503).
  bool post(serve::EngineTask task) override;
  bool alive() const override;
  // Who the API requests being answered are (ApiServer::active_requests), asked at each
  // panel frame; empty while not serving. Any thread.
  using ApiRequests = std::function<std::vector<std::pair<std::int64_t, RequestId>>()>;
  void setApiRequests(ApiRequests source);

 public slots:
  // Replaces the loaded model (replies in flight end as Cancelled first). An empty path
  // loads the demo model. Emits modelLoading, then modelLoaded or modelFailed; after a
  // failure the model loaded before (if any) is loaded again, so the app stays usable.
  void loadModel(const kvscope::ui::LoadRequest& request);
  // Starts a reply for the chat (a reply already running for it is cancelled first).
  void submitChat(const kvscope::ui::ChatRequest& request);
  // The chat's reply ends (Cancelled) at the start of the next step; its text is kept.
  void stopChat(kvscope::ui::ChatId chat);
  // The chat is gone: its reply (if any) is cancelled and the cache it kept is released.
  void forgetChat(kvscope::ui::ChatId chat);
  // "Check against the engine" (run/plan_check.h) on the loaded engine: planCheckDone, or
  // planCheckFailed while replies run or with no model.
  void checkPlan();
  // Panel frames are taken only while enabled (the panel is visible).
  void setPanelEnabled(bool enabled);
  // The API server stopped: the prefixes its requests kept are let go (with the chats' own,
  // which the scheduler does not tell apart; a chat's next turn then runs its prompt again).
  void releaseKeptCaches();

 signals:
  void modelLoading(const QString& what);
  void modelLoaded(const kvscope::ui::ModelInfo& info);
  void modelFailed(const QString& error);
  void replyStarted(kvscope::ui::ChatId chat, qint64 prompt_tokens);
  // Text the last step added to the chat's reply; generated_tokens counts all so far.
  void replyText(kvscope::ui::ChatId chat, const QString& text, qint64 generated_tokens);
  void promptProgress(kvscope::ui::ChatId chat, qint64 done, qint64 total);
  void replyFinished(const kvscope::ui::ReplyFinished& result);
  void frameReady(const kvscope::ui::PanelFrame& frame);
  void speedMeasured(const kvscope::ui::SpeedSample& speed);
  void busyChanged(bool busy);
  void planCheckDone(const kvscope::PlanCheck& check);
  void planCheckFailed(const QString& error);
  // A task posted through the host (the API server's) threw instead of answering its caller.
  void taskFailed(const QString& error);

 private:
  struct Reply {
    std::uint64_t ticket = 0;  // tells this reply's callbacks from an earlier one's
    RequestId request = 0;
    std::int64_t prompt_tokens = 0;
    std::int64_t generated = 0;
    std::int64_t progress_reported = -1;
    std::string pending;  // text streamed during the current step, emitted after it
    std::optional<RequestResult> result;
  };

  enum class LoadResult { Loaded, Failed, Cancelled };
  LoadResult load(const LoadRequest& request);
  // False (and the engine dropped, with modelFailed) when a model file changed on disk
  // since the load: reading on could end the process with SIGBUS (util/file_snapshot.h).
  bool model_files_unchanged();
  void post_step();
  void run_step();
  void run_tasks();
  void open_host(bool open);
  void on_token(ChatId chat, std::uint64_t ticket, const TokenEvent& event);
  void on_finish(ChatId chat, std::uint64_t ticket, const RequestResult& result);
  void flush_replies();
  void report_progress(ChatId chat, Reply& reply);
  void finish_reply(ChatId chat, const Reply& reply);
  void drop_reply(std::map<ChatId, Reply>::iterator it);
  void drop_engine(FinishReason reason, const QString& why);
  void abandon_all(FinishReason reason, const QString& why);
  void emit_frame(bool force);
  void label_api_sequences(PanelFrame& frame);
  void measure_speed(bool going_idle);
  void set_busy(bool busy);
  ModelInfo model_info(const QString& path, bool demo) const;

  QString demo_folder_;
  std::shared_ptr<const LoadCancel> cancel_;
  std::unique_ptr<Engine> engine_;
  FileSnapshot files_;                    // the loaded model's files as they were at load
  QString files_changed_;                 // why the engine was dropped, when they changed
  std::optional<LoadRequest> last_good_;  // the last request that loaded
  bool demo_ = false;                     // the demo model is loaded
  std::map<ChatId, Reply> replies_;
  // The request whose cache each chat keeps (its last reply: prompt and reply stay in the
  // cache, so regenerating or the next turn shares them instead of running them again).
  std::map<ChatId, RequestId> kept_;
  std::vector<RequestId> release_after_step_;  // cancelled replies nobody will continue
  std::uint64_t next_ticket_ = 1;
  bool step_posted_ = false;
  // The host side, shared with the HTTP threads.
  mutable std::mutex host_mutex_;
  std::deque<serve::EngineTask> tasks_;
  bool host_open_ = false;     // an engine is loaded and takes tasks
  bool tasks_posted_ = false;  // a run_tasks call is queued
  ApiRequests api_requests_;
  bool busy_ = false;
  bool panel_enabled_ = true;
  QElapsedTimer since_load_;
  qint64 last_frame_ms_ = -1;
  qint64 frame_interval_ms_ = 100;
  // Throughput window: starts with the first step of a busy period.
  QElapsedTimer speed_clock_;
  std::int64_t speed_decode0_ = 0;
  std::int64_t speed_prompt0_ = 0;
  qint64 step_ns_ = 0;   // in the window, inside Engine::step()
  qint64 frame_ns_ = 0;  // in the window, taking panel frames
};

}  // namespace kvscope::ui
