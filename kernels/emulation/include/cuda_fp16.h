// The CUDA emulation's cuda_fp16.h: __half, __half2 and their intrinsics (emu_half.h).
#pragma once

#include "../emu_half.h"
