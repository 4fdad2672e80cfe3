// A kernel launch in the CUDA emulation: run_kernel(kernel, grid, block, smem, stream,
// args...) checks the configuration as the device would (threads per block, grid limits,
// dynamic shared memory against the limit or the kernel's opt-in attribute), then runs the
// kernel on every thread of every block of the grid (emu_block.cpp), or records the launch
// while the stream captures a graph.
#pragma once

#include <cstddef>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "emu_device.h"
#include "emu_types.h"

namespace kvscope::emu {

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  std::size_t dynamic_shared_bytes = 0;
  cudaStream_t stream = nullptr;
  const void* kernel = nullptr;  // identifies the kernel (attributes, graph topology)
};

// Checks cfg; on success runs (or records) `body` once per emulated thread.
void launch(const LaunchConfig& cfg, std::function<void()> body);

// The dynamic shared memory of the running block, as T.
template <class T>
T* dynamic_shared() {
  return reinterpret_cast<T*>(t_block->dynamic_shared);
}

template <class... Params, class... Args>
void run_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                cudaStream_t stream, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "kernel called with the wrong arguments");
  // the parameters are copied at the launch, as the device copies them into constant memory
  std::tuple<std::decay_t<Params>...> params(static_cast<Params>(std::forward<Args>(args))...);
  launch({grid, block, smem, stream, reinterpret_cast<const void*>(kernel)},
         [kernel, params] { std::apply(kernel, params); });
}

}  // namespace kvscope::emu
