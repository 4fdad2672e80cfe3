// ScreenshotDriver: runs the real window through a scripted chat and saves PNGs of it,
// for tests/ui/screenshots.sh under Xvfb. Chat 1 gets a prompt; once it has streamed a
// few tokens a second chat starts, so two sequences share the cache; the window is saved
// mid-generation and again after both replies end, and every chart of the live panel must
// have points. Then chat 2's reply is regenerated (its prompt's blocks shared with the
// kept reply: saved mid-way as <prefix>-regenerate), a chat saved by an earlier run is
// opened (<prefix>-saved-chat, when there is one), and each page beside the chat is
// saved (<prefix>-models once its scan ends, -fits, -demo-paging, -demo-prefix, -demo-gqa,
// -demo-quant). A reply that stops before its shot's token count (a base model's stop string)
// is shot when it ends, with a note. It quits with 0, or 1 saying what was wrong.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include "worker/engine_messages.h"

namespace kvscope::ui {

class MainWindow;

struct ScreenshotPlan {
  QString out_dir;
  QString prefix;  // file names: <prefix>-mid.png, <prefix>-after.png
  QString first_prompt = QStringLiteral("Once upon a time, a little fox");
  // Longer than one block of 16 tokens, so a regenerated reply keeps full blocks shared.
  QString second_prompt = QStringLiteral(
      "Tell me a long story about the moon, the stars and the little fox who watched them.");
  qint64 second_chat_after = 24;  // tokens of chat 1 before chat 2 starts
  qint64 grab_after = 160;        // tokens of chat 2 before the mid-generation shot
  qint64 max_tokens = 400;
  int timeout_ms = 120000;
};

class ScreenshotDriver : public QObject {
  Q_OBJECT

 public:
  ScreenshotDriver(MainWindow* window, ScreenshotPlan plan);

 private:
  void on_model_ready();
  void on_text(ChatId chat, qint64 generated);
  void on_finished(const ReplyFinished& result);
  void grab(const QString& name);
  bool check_panel();
  void grab_saved_chat();
  void grab_pages_and_quit();
  void grab_models_and_rest();
  void fail(const QString& why);

  MainWindow* window_;
  ScreenshotPlan plan_;
  ChatId first_ = 0;
  ChatId second_ = 0;
  bool grabbed_mid_ = false;
  bool regenerating_ = false;
  bool grabbed_regenerate_ = false;
  int finished_ = 0;
  bool started_ = false;
};

}  // namespace kvscope::ui
