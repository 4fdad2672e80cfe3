// The data movement of a warp shuffle: which lane a lane reads, as PTX's shfl.sync defines
// it, and the copy of the value read (emu_block.cpp completes a collective with these).
#pragma once

#include <cstring>

#include "emu_device.h"

namespace kvscope::emu {

// The source lane of a shuffle as PTX's shfl.sync defines it (own lane when out of range).
inline int shuffle_source(const WarpRequest& r, int lane) {
  const int b = r.lane_arg & 0x1f;
  const int segmask = (r.c >> 8) & 0x1f;
  const int clamp = r.c & 0x1f;
  const int max_lane = (lane & segmask) | (clamp & ~segmask);
  const int min_lane = lane & segmask;
  int j = lane;
  bool in_range = true;
  switch (r.op) {
    case WarpOp::Up:
      j = lane - b;
      in_range = j >= max_lane;
      break;
    case WarpOp::Down:
      j = lane + b;
      in_range = j <= max_lane;
      break;
    case WarpOp::Xor:
      j = lane ^ b;
      in_range = j <= max_lane;
      break;
    default:  // Idx
      j = min_lane | (b & ~segmask);
      in_range = j <= max_lane;
      break;
  }
  return in_range ? j : lane;
}

// A shuffled value: 4 and 8 bytes (float, int, half2, double) without a call to memcpy.
inline void copy_value(void* to, const void* from, unsigned size) {
  if (size == 4) {
    std::memcpy(to, from, 4);
  } else if (size == 8) {
    std::memcpy(to, from, 8);
  } else {
    std::memcpy(to, from, size);
  }
}

}  // namespace kvscope::emu
