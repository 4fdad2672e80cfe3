// ApiServeController: File > "Serve this model" behind the dialog. It runs the
// OpenAI-compatible ApiServer (engine/serve) on a thread of its own, in front of the app's
// engine worker, so API requests join the chats' batch. The GUI thread never waits on it:
// binding, serving and the server's stop happen on that thread, and their outcome comes
// back as signals. Stopping closes the host first (requests in flight end at once and are
// cancelled), then lets go of the prefixes the requests kept.
#pragma once

#include <QObject>
#include <QString>

#include <cstdint>
#include <memory>

#include "serve/api_server.h"
#include "serving/closable_host.h"

namespace kvscope::ui {

class EngineController;

class ApiServeController : public QObject {
  Q_OBJECT

 public:
  // Make it a child of `engine`: its host must outlive the engine's steps (API requests'
  // callbacks post to it), and the EngineController stops them before its children go.
  explicit ApiServeController(EngineController* engine);
  // Stops and joins the server thread (bounded: waiting requests give up within a poll).
  ~ApiServeController() override;

  // Starts serving `model` (nothing while a server runs or stops). started() or failed().
  void start(const serve::ServedModel& model, const serve::ServerOptions& options);
  // Stops serving; stopped() once the server thread has ended.
  void stop();

  bool serving() const { return run_ != nullptr; }
  QString url() const { return url_; }  // "" until started
  std::int64_t clients() const;         // HTTP requests being answered

 signals:
  void started(const QString& url);
  void failed(const QString& error);
  void stopped();

 private:
  struct Run;
  void on_bound(int port);
  void on_ended(const QString& error);
  void join();

  EngineController* engine_;
  ClosableHost host_;
  std::shared_ptr<Run> run_;
  QString url_;
};

}  // namespace kvscope::ui
