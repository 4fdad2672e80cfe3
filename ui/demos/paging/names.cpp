#include "demos/paging/names.h"

#include <QCoreApplication>

namespace kvscope::ui {
namespace {

constexpr auto kContext = "PagingNames";

// The engine's texts, for lupdate: a text missing here (changed in engine/sim) shows as the
// engine wrote it, and the zh_CN test names it.
[[maybe_unused]] constexpr const char* kEngineTexts[] = {
    QT_TRANSLATE_NOOP("PagingNames", "reserve-max"),
    QT_TRANSLATE_NOOP("PagingNames", "exact-fit"),
    QT_TRANSLATE_NOOP("PagingNames", "paged"),
    QT_TRANSLATE_NOOP("PagingNames", "chat"),
    QT_TRANSLATE_NOOP("PagingNames", "api-burst"),
    QT_TRANSLATE_NOOP("PagingNames", "long-documents"),
    QT_TRANSLATE_NOOP("PagingNames",
                      "ShareGPT-like chat: prompts ~165, outputs ~340 tokens, steady arrivals"),
    QT_TRANSLATE_NOOP("PagingNames", "API bursts: 96 short requests at once every 64 steps"),
    QT_TRANSLATE_NOOP("PagingNames", "Long documents: prompts ~3000 tokens, answers ~200"),
};

QString translated(const std::string& text) {
  return QCoreApplication::translate(kContext, text.c_str());
}

}  // namespace

QString policy_label(SimPolicy policy) {
  return translated(std::string(sim_policy_name(policy)));
}

QString trace_label(const TracePreset& preset) {
  return translated(preset.name);
}

QString trace_description(const TracePreset& preset) {
  return translated(preset.description);
}

}  // namespace kvscope::ui
