// Which paged attention kernel runs: the fast decode kernel (paged_attention_fast.cuh) where
// the layout allows it, else the generic one. Host-only declarations (no device code), so the
// bench and the tests include this from .cpp files to time or test each kernel by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

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

// --- The generic kernel's head tiles -------------------------------------------------

// Shared memory of a generic-kernel CTA serving `heads` query heads: q and acc [heads][head_dim],
// p [heads][block_size], m, l and rescale [heads], all f32.
std::size_t generic_attention_smem_bytes(int heads, int head_dim, int block_size);

// How the generic kernel splits a KV head's `group` query heads over CTAs so that each fits
// `smem_limit` bytes (the device's opt-in maximum per CTA: 64 KB on sm_75, ~99 KB on sm_86 /
// sm_89, ~227 KB on sm_90): as few tiles as fit, their heads as even as can be (the last tile
// may have fewer). Each K and V byte is read once per tile, so one tile is the fast case.
struct GenericAttentionTiling {
  int tile_heads = 0;          // query heads a CTA serves; 0 when not even one head fits
  int n_tiles = 0;             // tiles per KV head: ceil(group / tile_heads)
  std::size_t smem_bytes = 0;  // generic_attention_smem_bytes(tile_heads, ...)
};
GenericAttentionTiling generic_attention_tiling(int group, int head_dim, int block_size,
                                                std::size_t smem_limit);

// The current device's opt-in shared memory per CTA (cudaDevAttrMaxSharedMemoryPerBlockOptin).
std::size_t device_shared_memory_limit();

// Which kernel runs one layer of `layout` with n_heads query heads and why, decided on the
// host alone (the pool and q are taken as cudaMalloc gives them, 256-byte aligned):
// fast_attention_unsupported's reason when the generic kernel runs, and its tiles.
struct AttentionChoice {
  AttentionKernel kernel = AttentionKernel::Generic;
  std::string why_generic;        // "" for the fast kernel; KVSCOPE_ATTENTION_KERNEL or the layout
  GenericAttentionTiling tiling;  // the generic kernel's (also when the fast one runs)
};
// exact_tail: the group keeps an exact tail (kv/exact_tail.h), which the generic kernel reads.
AttentionChoice attention_choice(const KvLayerLayout& layout, int n_heads, std::size_t smem_limit,
                                 bool generic_forced = false, bool exact_tail = false);
// One line for `bench` and `devices`: "fast kernel" or "generic kernel (head_dim is not 64, 96,
// 128 or 256), 16 query heads per CTA in 2 tiles, 35.0 KiB shared memory of 99.0 KiB".
std::string describe_attention_choice(const AttentionChoice& choice, std::size_t smem_limit);
// Whether KVSCOPE_ATTENTION_KERNEL=generic (read once per process).
bool attention_generic_forced();

// launch_paged_attention with the kernel named (the environment is not read). Fast throws
// UsageError, naming the reason, when fast_attention_unsupported says it cannot run.
void launch_paged_attention_with(AttentionKernel kernel, const AttentionArgs& args, const float* q,
                                 float* partial, float* out, cudaStream_t stream);

// The fast path alone, arguments already checked (paged_attention_fast.cu): the kernel and,
// with more than one split, its log-sum-exp merge.
void launch_fast_paged_attention(const AttentionArgs& args, const float* q, float* partial,
                                 float* out, cudaStream_t stream);

}  // namespace kvscope::cuda
