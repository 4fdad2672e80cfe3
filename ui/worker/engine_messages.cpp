#include "worker/engine_messages.h"

#include <QCoreApplication>
#include <QRegularExpression>

namespace kvscope::ui {

void register_engine_metatypes() {
  qRegisterMetaType<LoadRequest>();
  qRegisterMetaType<ModelInfo>();
  qRegisterMetaType<ChatRequest>();
  qRegisterMetaType<ReplyFinished>();
  qRegisterMetaType<PanelFrame>();
  qRegisterMetaType<SpeedSample>();
  qRegisterMetaType<PlanCheck>();
  qRegisterMetaType<ChatId>("kvscope::ui::ChatId");
}

QString device_label(const std::string& device) {
  // The CPU backend's name() is "CPU (N threads)"; a GPU's name stays as its maker wrote it.
  static const QRegularExpression cpu(QStringLiteral(R"(^CPU \((\d+) threads\)$)"));
  const QString text = QString::fromStdString(device);
  const QRegularExpressionMatch m = cpu.match(text);
  if (!m.hasMatch()) return text;
  return QCoreApplication::translate("EngineMessages", "CPU (%1 threads)").arg(m.captured(1));
}

QString devices_label(const MemoryInfo& memory, const std::optional<SplitMemory>& split) {
  if (!split) return device_label(memory.device);
  return QStringLiteral("%1 + %2").arg(device_label(split->gpu.device),
                                       device_label(split->cpu.device));
}

QString backend_note_label(const QString& note) {
  // The engine's "CUDA unavailable: WHY; using the CPU": the frame translated, the reason
  // (the driver's or the runtime's words) as it is.
  static const QRegularExpression fallback(
      QStringLiteral("^CUDA unavailable: (.*); using the CPU$"),
      QRegularExpression::DotMatchesEverythingOption);
  const QRegularExpressionMatch m = fallback.match(note);
  if (!m.hasMatch()) return note;
  return QCoreApplication::translate("EngineMessages", "CUDA unavailable: %1; using the CPU")
      .arg(m.captured(1));
}

QString template_label(const QString& family) {
  if (family == QLatin1String("none")) return QCoreApplication::translate("EngineMessages", "none");
  if (family == QLatin1String("plain")) {
    return QCoreApplication::translate("EngineMessages", "plain text");
  }
  return family;  // chatml, llama3, gemma, ...: names of formats
}

}  // namespace kvscope::ui
