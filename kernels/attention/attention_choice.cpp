// The host side of choosing a paged attention kernel: the generic kernel's head tiles
// against the device's shared memory, and the choice in words for `bench` and `devices`.
// Plain C++ beside the kernels, so the tests run all of it without a device.
#include <cuda_runtime.h>

#include <algorithm>

#include <fmt/format.h>

#include "attention/paged_attention_choice.cuh"
#include "backend/cuda_check.h"
#include "backend/cuda_device.h"
#include "plan/cuda_workspace.h"

namespace kvscope::cuda {

// The split rule is the planner's (plan/cuda_workspace.h), which sizes the partials with it.
std::int64_t attention_partial_floats(int n_tokens, int n_heads, int head_dim, int n_splits) {
  return cuda_attention_partial_floats(n_tokens, n_heads, head_dim, n_splits);
}

int attention_splits(int n_tokens, int n_heads, int n_kv_heads, std::int64_t max_keys,
                     int sm_count) {
  return cuda_attention_splits(n_tokens, n_heads, n_kv_heads, max_keys, sm_count);
}

std::size_t generic_attention_smem_bytes(int heads, int head_dim, int block_size) {
  const auto h = static_cast<std::size_t>(std::max(heads, 0));
  return sizeof(float) * h *
         (2 * static_cast<std::size_t>(head_dim) + static_cast<std::size_t>(block_size) + 3);
}

GenericAttentionTiling generic_attention_tiling(int group, int head_dim, int block_size,
                                                std::size_t smem_limit) {
  GenericAttentionTiling t;
  const std::size_t per_head = generic_attention_smem_bytes(1, head_dim, block_size);
  if (group < 1 || per_head > smem_limit) return t;
  const int fit = static_cast<int>(std::min<std::size_t>(smem_limit / per_head, group));
  t.n_tiles = (group + fit - 1) / fit;
  t.tile_heads = (group + t.n_tiles - 1) / t.n_tiles;  // even tiles: never more than `fit`
  t.smem_bytes = generic_attention_smem_bytes(t.tile_heads, head_dim, block_size);
  return t;
}

std::size_t device_shared_memory_limit() {
  int device = 0, bytes = 0;
  KVSCOPE_CUDA_CHECK(cudaGetDevice(&device));
  KVSCOPE_CUDA_CHECK(
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return static_cast<std::size_t>(bytes);
}

AttentionChoice attention_choice(const KvLayerLayout& layout, int n_heads, std::size_t smem_limit,
                                 bool generic_forced, bool exact_tail) {
  // Addresses as cudaMalloc gives them: only their alignment is looked at.
  alignas(256) static float placeholder[64];
  AttentionArgs args;
  args.n_tokens = 1;
  args.n_heads = n_heads;
  args.layout = layout;
  args.tables.pool = reinterpret_cast<std::uint8_t*>(placeholder);
  if (exact_tail) args.tables.tail.shadows = reinterpret_cast<const int*>(placeholder);
  AttentionChoice c;
  const int group = layout.n_kv_heads > 0 ? n_heads / layout.n_kv_heads : 0;
  c.tiling = generic_attention_tiling(group, layout.head_dim, layout.block_size, smem_limit);
  if (generic_forced) {
    c.why_generic = "KVSCOPE_ATTENTION_KERNEL=generic";
  } else if (const char* why = fast_attention_unsupported(args, placeholder)) {
    c.why_generic = why;
  } else {
    c.kernel = AttentionKernel::Fast;
  }
  return c;
}

std::string describe_attention_choice(const AttentionChoice& c, std::size_t smem_limit) {
  if (c.kernel == AttentionKernel::Fast) return "fast kernel";
  const double kib = 1024.0;
  if (c.tiling.tile_heads == 0) {
    return fmt::format(
        "generic kernel ({}), which cannot run: one query head needs more than "
        "the {:.1f} KiB of shared memory a CTA may have",
        c.why_generic, static_cast<double>(smem_limit) / kib);
  }
  return fmt::format(
      "generic kernel ({}), {} query head{} per CTA in {} tile{}, {:.1f} KiB shared memory of "
      "{:.1f} KiB",
      c.why_generic, c.tiling.tile_heads, c.tiling.tile_heads == 1 ? "" : "s", c.tiling.n_tiles,
      c.tiling.n_tiles == 1 ? "" : "s", static_cast<double>(c.tiling.smem_bytes) / kib,
      static_cast<double>(smem_limit) / kib);
}

}  // namespace kvscope::cuda

namespace kvscope {

std::string describe_attention_rules(const CudaDeviceInfo& info) {
  const std::size_t limit = info.shared_memory_per_block_optin;
  const std::size_t heads = limit / cuda::generic_attention_smem_bytes(1, 128, 16);
  const std::string generic = fmt::format(
      "the generic kernel serves up to {} query heads a CTA at head_dim 128, block size 16 ({:.1f} "
      "KiB of shared memory a CTA), more in tiles",
      heads, static_cast<double>(limit) / 1024.0);
  if (cuda::attention_generic_forced()) {
    return "attention: KVSCOPE_ATTENTION_KERNEL=generic: every layer runs the generic kernel; " +
           generic;
  }
  return "attention: the fast kernel for head_dim 64, 96, 128 and 256 (f16, int8, int4 KV); "
         "other head dims (80, 112, 160, ...), unaligned KV sections and groups keeping an "
         "exact tail (--kv-exact-tail) run the generic kernel; " +
         generic;
}

}  // namespace kvscope
