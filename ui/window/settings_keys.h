// The QSettings keys the window and main() share. Keys used in one file only stay there,
// beside their use (window/language.cpp, the Models and Remote pages, load_settings.cpp).
#pragma once

namespace kvscope::ui {

inline constexpr auto kDarkThemeKey = "darkTheme";        // bool: View > Dark theme
inline constexpr auto kLastModelKey = "lastModel";        // the model loaded last ("": the demo)
inline constexpr auto kRecentModelsKey = "recentModels";  // File > Recent models, newest first

}  // namespace kvscope::ui
