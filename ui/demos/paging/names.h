// The simulator's names (engine/sim) as the demo shows them: the allocation policies and the
// trace presets, in the interface's language. The engine's own names are the English texts
// (and the CLI's arguments); the translations are listed in names.cpp for lupdate.
#pragma once

#include <QString>

#include "sim/sim_config.h"
#include "sim/trace/trace_presets.h"

namespace kvscope::ui {

QString policy_label(SimPolicy policy);                // "reserve-max", "exact-fit", "paged"
QString trace_label(const TracePreset& preset);        // "chat", "api-burst", ...
QString trace_description(const TracePreset& preset);  // its one line

}  // namespace kvscope::ui
