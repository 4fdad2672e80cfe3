// The colour of each chat, shared by the sidebar and the block map so a block's owner can
// be read at a glance. Mid-tone hues (Tableau 10) that stay readable on light and dark
// palettes alike.
#pragma once

#include <QColor>

#include <cstdint>

#include "worker/engine_messages.h"

namespace kvscope::ui {

// Chat 1 gets the first colour, chat 2 the second, ...
QColor chat_color(ChatId chat);
// API request n ("API #n", ui/serving) gets its own, from a darker set than the chats', so
// eight clients at once stay apart from each other and from the chats.
QColor api_color(std::int64_t n);

}  // namespace kvscope::ui
