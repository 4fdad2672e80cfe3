// The built-in model: a small Llama-shaped decoder with seeded random weights, so the
// app opens with something to chat with and a panel to watch before any model is chosen.
// Its output is noise, and the GUI says so wherever the model is named.
//
// Shape: 6 layers, dim 256, 8 heads, 2 KV heads (GQA), head_dim 32, vocab 1024, context
// 1024, f16 weights (~10 MiB). The KV cache is split into two layer groups, even layers
// with full attention and odd layers with a 128-token sliding window (as Gemma 2
// alternates), so the block map shows one group that keeps growing and one that frees
// its oldest blocks.
#pragma once

#include <QString>

#include "run/engine.h"

namespace kvscope::ui {

// "Demo model (random weights — output is noise)"
QString builtin_model_label();
// One line on the shape, for tooltips and the model info.
QString builtin_model_description();

// The demo's GGUF in `folder`, reused when its checksum file (kvscope-demo-v1.gguf.sha256)
// matches, written again otherwise: through a uniquely named temporary file, synced, then
// renamed into place, so a crash or a second instance never leaves or reads half a file.
// Returns its path. Throws kvscope::Error when it cannot be written.
QString ensure_builtin_model(const QString& folder);

// `base` with the demo's two layer groups (full / sliding window) in the base's KV dtypes.
EngineOptions builtin_engine_options(EngineOptions base);

}  // namespace kvscope::ui
