// The CUDA emulation's cuda_runtime.h (kernels/emulation): the runtime API, the execution
// model's device functions and the qualifiers, so the project's .cu sources compile as C++
// and run on the CPU. Like nvcc, the emulation build includes it in every .cu file.
#pragma once

#include <cmath>
#include <cstring>

#include "../emu_device.h"
#include "../emu_half.h"
#include "../emu_launch.h"
#include "../emu_runtime_api.h"
#include "../emu_types.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// Static shared memory: one copy per OS thread, which runs one block at a time. Array
// subscripts are checked (-fsanitize=bounds in the emulation build).
#define __shared__ static thread_local
#define __constant__ static
