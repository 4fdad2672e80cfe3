#include "plan/units.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "util/error.h"

namespace kvscope {

namespace {

struct Unit {
  std::string_view name;
  double factor;
};

constexpr std::array<Unit, 14> kUnits{{
    {"", 1.0},
    {"b", 1.0},
    {"kb", 1e3},
    {"mb", 1e6},
    {"gb", 1e9},
    {"tb", 1e12},
    {"kib", 1024.0},
    {"mib", 1024.0 * 1024.0},
    {"gib", 1024.0 * 1024.0 * 1024.0},
    {"tib", 1024.0 * 1024.0 * 1024.0 * 1024.0},
    // Bare letters are binary, as in llama.cpp and the other kvscope-cli commands.
    {"k", 1024.0},
    {"m", 1024.0 * 1024.0},
    {"g", 1024.0 * 1024.0 * 1024.0},
    {"t", 1024.0 * 1024.0 * 1024.0 * 1024.0},
}};

double unit_factor(std::string_view unit) {
  std::string lowered;
  for (const char c : unit)
    lowered += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const Unit& u : kUnits) {
    if (u.name == lowered) return u.factor;
  }
  return 0.0;
}

}  // namespace

std::int64_t parse_byte_size(std::string_view text, std::string_view what) {
  auto fail = [&](std::string_view why) {
    throw_error<UsageError>("{} \"{}\": {} (examples: 8GiB, 16GB, 512MiB, 1000000)", what, text,
                            why);
  };
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  const std::string_view number = text.substr(0, i);
  std::string_view unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  if (number.empty()) fail("needs a number");
  double value = 0.0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size()) fail("is not a number");
  const double factor = unit_factor(unit);
  if (factor == 0.0) fail("unknown unit (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, K, M, G, T)");
  const double bytes = std::round(value * factor);
  if (!std::isfinite(bytes) || bytes > std::ldexp(1.0, 62)) fail("is too large");
  return static_cast<std::int64_t>(bytes);
}

std::string group_digits(std::int64_t value) {
  const std::uint64_t magnitude =
      value < 0 ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  const std::string digits = fmt::format("{}", magnitude);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string human_bytes(std::int64_t bytes) {
  const double magnitude = std::fabs(static_cast<double>(bytes));
  constexpr std::array<std::string_view, 5> kNames{"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (magnitude < 1024.0) return fmt::format("{} B", bytes);
  double scaled = static_cast<double>(bytes);
  std::size_t unit = 0;
  for (scaled /= 1024.0; std::fabs(scaled) >= 1024.0 && unit + 1 < kNames.size(); ++unit) {
    scaled /= 1024.0;
  }
  const double a = std::fabs(scaled);
  const int decimals = a >= 100.0 ? 0 : (a >= 10.0 ? 1 : 2);
  return fmt::format("{:.{}f} {}", scaled, decimals, kNames[unit]);
}

}  // namespace kvscope
