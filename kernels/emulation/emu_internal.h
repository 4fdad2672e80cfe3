// What the CUDA emulation's runtime files share: the emulated device's limits, the error
// state (the last error of each host thread, and the sticky error a fault leaves on the
// "context"), and the queue every piece of device work goes through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "emu_launch.h"
#include "emu_types.h"

namespace kvscope::emu {

// The emulated GPU: an sm_86 part shaped like an RTX 3070 (46 SMs, 99 KB of opt-in shared
// memory per block), with KVSCOPE_EMU_DEVICE_MEMORY bytes (default 2 GiB) of "device" memory.
inline constexpr int kComputeMajor = 8;
inline constexpr int kComputeMinor = 6;
inline constexpr int kSmCount = 46;
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr std::size_t kSharedPerBlock = 48 * 1024;
inline constexpr std::size_t kSharedPerBlockOptin = 101376;
inline constexpr int kL2Bytes = 4 * 1024 * 1024;
std::size_t device_memory_bytes();

// Sets this thread's last error (and, for a fault that breaks the context, the sticky one);
// `detail` is what cudaGetErrorString adds for it.
void set_error(cudaError_t err, std::string detail = {});
// The sticky error, cudaSuccess while the context is sound.
cudaError_t sticky_error();
// A call's result: the sticky error when there is one, else `err` (recorded as last error).
cudaError_t result(cudaError_t err);

// Device work: run now, or recorded when `stream` is capturing. `kind` tells nodes apart for
// cudaGraphExecUpdate (a kernel's address, or the address of a static tag per operation).
using Work = std::function<cudaError_t()>;
cudaError_t submit(cudaStream_t stream, const void* kind, Work work);
// A call that is illegal while this thread captures (synchronous copies, allocation,
// synchronisation) invalidates the capture and returns cudaErrorStreamCaptureUnsupported.
bool refuse_during_capture();

// Runs every block of the grid (emu_block.cpp); a fault is recorded with set_error and
// returned.
cudaError_t run_grid(const LaunchConfig& cfg, const std::function<void()>& body);

// Whether [p, p + bytes) lies in one device allocation (emu_memory.cpp).
bool is_device_range(const void* p, std::size_t bytes);

}  // namespace kvscope::emu
