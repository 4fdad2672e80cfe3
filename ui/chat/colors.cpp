#include "chat/colors.h"

#include <array>

namespace kvscope::ui {

QColor chat_color(ChatId chat) {
  static constexpr std::array<QRgb, 10> kColors = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2,
                                                   0x59a14f, 0xedc948, 0xb07aa1, 0xff9da7,
                                                   0x9c755f, 0xbab0ac};
  const auto n = static_cast<ChatId>(kColors.size());
  return QColor(kColors[static_cast<std::size_t>((((chat - 1) % n) + n) % n)]);
}

QColor api_color(std::int64_t n) {
  // ColorBrewer Dark2: eight clients at once stay apart, and darker than the chats' colours.
  static constexpr std::array<QRgb, 8> kColors = {0x1b9e77, 0xd95f02, 0x7570b3, 0xe7298a,
                                                  0x66a61e, 0xe6ab02, 0xa6761d, 0x666666};
  const auto k = static_cast<std::int64_t>(kColors.size());
  return QColor(kColors[static_cast<std::size_t>((((n - 1) % k) + k) % k)]);
}

}  // namespace kvscope::ui
