// The colour of each chat, shared by the sidebar and the block map so a block's owner can
// be read at a glance. Mid-tone hues (Tableau 10) that stay readable on light and dark
// palettes alike.
#pragma once

#include <QColor>

#include "worker/engine_messages.h"

namespace kvscope::ui {

// Chat 1 gets the first colour, chat 2 the second, ...
QColor chat_color(ChatId chat);

}  // namespace kvscope::ui
