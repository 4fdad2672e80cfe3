// Identifiers shared by the KV cache classes.
#pragma once

#include <cstdint>

namespace kvscope {

// A physical block inside one layer group's pool: 0 .. n_blocks - 1.
using BlockId = std::int32_t;
inline constexpr BlockId kNoBlock = -1;

// A sequence (one request, or one branch of a forked request), chosen by the scheduler.
using SeqId = std::int64_t;

}  // namespace kvscope
