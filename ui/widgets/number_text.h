// How the "What fits" page writes its numbers: bytes in binary units and tokens with
// thousands separators, both through engine/plan/units.h (the CLI's plan prints the same).
#pragma once

#include <QString>

#include <cstdint>

namespace kvscope::ui {

// "1.00 GiB", "512.0 MiB" (human_bytes).
QString bytes_text(std::int64_t bytes);
// "32,768" (group_digits).
QString count_text(std::int64_t count);

}  // namespace kvscope::ui
