// How every kernel is launched and how a kernel declares its dynamic shared memory: one
// function and one macro, so the same .cu source builds for the device (nvcc: <<<...>>> and
// extern __shared__) and for the CUDA emulation (kernels/emulation: the host compiler, each
// thread a fiber on the CPU).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace kvscope::cuda {

// kernel<<<grid, block, smem, stream>>>(args...). The launcher checks the launch afterwards
// (KVSCOPE_CUDA_CHECK_LAUNCH), as before.
template <class... Params, class... Args>
inline void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                          cudaStream_t stream, Args&&... args) {
#if defined(KVSCOPE_CUDA_EMULATION)
  ::kvscope::emu::run_kernel(kernel, grid, block, smem, stream, std::forward<Args>(args)...);
#else
  // clang-format off
  kernel<<<grid, block, smem, stream>>>(std::forward<Args>(args)...);
  // clang-format on
#endif
}

}  // namespace kvscope::cuda

// `type* name`: the block's dynamic shared memory (the launch's smem bytes), 16-byte aligned.
#if defined(KVSCOPE_CUDA_EMULATION)
#define KVSCOPE_DYNAMIC_SHARED(type, name) type* const name = ::kvscope::emu::dynamic_shared<type>()
#else
#define KVSCOPE_DYNAMIC_SHARED(type, name) extern __shared__ __align__(16) type name[]
#endif
