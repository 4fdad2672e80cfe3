// Which paged attention kernel runs: the fast decode kernel (paged_attention_fast.cuh) where
// the layout allows it, else the generic one. Host-only declarations (no device code), so the
// bench and the tests include this from .cpp files to time or test each kernel by name.
#pragma once

#include <cstdint>

#include "backend/kernel_launchers.h"

namespace kvscope::cuda {

enum class AttentionKernel : std::uint8_t { Generic, Fast };

// "generic" or "fast".
const char* attention_kernel_name(AttentionKernel kernel);

// nullptr when the fast kernel can run `args` with the query q (a device pointer: only its
// alignment is looked at), else why not, in words. The fast kernel needs
//   - head_dim 64, 96, 128 or 256, and the layout's strides, scale counts and group sizes
//     (32) that kv_format.h gives for it,
//   - every load aligned: pool, block_bytes and K / V data sections to 16 bytes; int8 and
//     int4 data to their lane loads (8 and 4 bytes); offset-int4 scales to 4 bytes and its
//     offsets to 16; q to 16 bytes,
//   - block_bytes at most 2^30 (offsets inside a block are ints), at most 4096 splits.
const char* fast_attention_unsupported(const AttentionArgs& args, const float* q);

// The kernel launch_paged_attention runs for these arguments: Generic when the environment
// has KVSCOPE_ATTENTION_KERNEL=generic (read once per process) or the fast kernel cannot run
// them, else Fast.
AttentionKernel chosen_attention_kernel(const AttentionArgs& args, const float* q);

// launch_paged_attention with the kernel named (the environment is not read). Fast throws
// UsageError, naming the reason, when fast_attention_unsupported says it cannot run.
void launch_paged_attention_with(AttentionKernel kernel, const AttentionArgs& args, const float* q,
                                 float* partial, float* out, cudaStream_t stream);

// The fast path alone, arguments already checked (paged_attention_fast.cu): the kernel and,
// with more than one split, its log-sum-exp merge.
void launch_fast_paged_attention(const AttentionArgs& args, const float* q, float* partial,
                                 float* out, cudaStream_t stream);

}  // namespace kvscope::cuda
