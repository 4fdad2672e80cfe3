// Byte sizes as users write and read them. Memory is sized in binary units, vendors and
// bandwidths in decimal ones, and the planner takes both spellings at their word:
//   "8GiB" = 8 x 2^30, "16GB" = 16 x 10^9, "512MiB", "1.5GiB", "300000000" (bytes), and
//   bare letters as binary units the way llama.cpp writes them: "1.5G" = 1.5 x 2^30.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvscope {

// Accepts a non-negative number (decimals allowed) and an optional unit: B, KB, MB, GB, TB
// (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024); case-insensitive, optional space.
// UsageError naming `what` and the text when it is malformed, negative or over 2^62.
std::int64_t parse_byte_size(std::string_view text, std::string_view what = "size");

// "1,073,741,824"
std::string group_digits(std::int64_t value);

// "1.00 GiB", "512.0 MiB", "300 B": binary units, three significant digits.
std::string human_bytes(std::int64_t bytes);

}  // namespace kvscope
