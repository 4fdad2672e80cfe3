// The device's copy bandwidth, measured: the ceiling a decode step (which streams every
// weight once) can approach, so `bench` can say which fraction of it the decoder reaches.
#pragma once

#include <cstddef>

namespace kvscope {

// Device-to-device copies of `bytes`, `reps` times after one warm-up, timed with events;
// returns (bytes read + bytes written) per second in GB/s (10^9), i.e. 2 x bytes x reps /
// time, as NVIDIA's bandwidthTest counts a device-to-device copy. Throws kvscope::Error
// (CapacityError when the buffers do not fit) naming the failing call.
double measure_device_copy_bandwidth(int device = 0, std::size_t bytes = std::size_t{512} << 20,
                                     int reps = 20);

}  // namespace kvscope
