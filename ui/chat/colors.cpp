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
  const int hue = static_cast<int>((n * 137) % 360);
  return QColor::fromHsv(hue < 0 ? hue + 360 : hue, 120, 175);
}

}  // namespace kvscope::ui
