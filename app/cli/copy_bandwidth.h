// The copy bandwidth of what the engine decodes on (the CUDA device's, else host memory
// copied by the engine's thread count), in GB/s counting bytes read + written: the
// ceiling `bench` compares the decoder's streamed bytes per second with.
#pragma once

#include "run/engine.h"

namespace kvscope::cli {

double measure_copy_bandwidth(const Engine& engine, int cpu_threads);
// The CUDA device's copy bandwidth; 0 in a build without the CUDA backend. For a model split
// between GPU and CPU, whose measure_copy_bandwidth is the host's (the side a split's
// ceiling mostly comes from).
double measure_gpu_copy_bandwidth();
// Host memory only: 2 x 256 MiB copied by `threads` threads at once.
double measure_host_copy_bandwidth(int threads);

}  // namespace kvscope::cli
