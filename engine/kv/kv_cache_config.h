// What a KvCacheManager is built from: the model's KV shape, how its layers are grouped,
// the block size and the memory the pools may use.
//
// Layer groups: every model layer belongs to exactly one group; a group has one dtype per
// side (K, V) and one attention window, and its own pool of blocks and block table per
// sequence. The default is one group with all layers (uniform_layer_groups).
//
// Pool sizing: every full-attention group gets the same number of blocks n, so any
// sequence can reach the same length in each; a sliding-window group gets n too, or fewer
// when window_sequences caps it (below):
//   pool(g) = n                                              full attention, or no cap
//           = min(n, window_sequences x kv_sequence_cap_blocks(g))   sliding window
//   n       = the largest with sum over groups of pool(g) x block_bytes(g)
//             <= budget_bytes - kv_exact_tail_bytes
// or n_blocks when it is given instead of a budget.
#pragma once

#include <cstdint>
#include <vector>

#include "kv/format/kv_block_layout.h"
#include "kv/format/kv_format.h"

namespace kvscope {

struct LayerGroupConfig {
  std::vector<std::int64_t> layers;  // model layer indices, any order
  KvDtype k_dtype = KvDtype::F16;
  KvDtype v_dtype = KvDtype::F16;
  // 0: full attention. N > 0: sliding window, a query at position p sees the keys at
  // positions [p - N + 1, p] (N keys including its own), as Mistral / Gemma define it.
  std::int64_t window = 0;
  // The group's bytes live in a device backend's memory even where the cache keeps host
  // storage (host_storage): a model split between the GPU and the CPU (run/split_backend.h)
  // has the GPU's layers in groups of their own, held in VRAM, beside the CPU's in RAM.
  bool on_device = false;
};

struct KvCacheConfig {
  std::vector<LayerGroupConfig> groups;
  std::int64_t n_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t block_size = 16;  // token slots per block, >= 1
  // Longest sequence allowed (the model's context length). grow() beyond it is a
  // CapacityError, and it is what the contiguous reference policy reserves per sequence.
  std::int64_t max_context = 0;
  // Exactly one of these is > 0: a byte budget for all pools, or the block count per group.
  std::int64_t budget_bytes = 0;
  std::int64_t n_blocks = 0;
  // false when a device backend holds the bytes: the manager then keeps only bookkeeping
  // and reports copy-on-write copies for the backend to perform (see KvCacheManager::grow).
  // A group marked on_device keeps no host bytes either way.
  bool host_storage = true;
  // Exact tail (exact_tail.h), for groups whose K or V is quantized: a query reads the newest
  // exact_tail_blocks blocks of its sequence (its own and those before it) from fp16 copies,
  // of which each such group has exact_tail_shadows. 0 and 0: off. The copies' bytes come out
  // of budget_bytes (kv_exact_tail_bytes); without host_storage the device holds them.
  std::int64_t exact_tail_blocks = 0;
  std::int64_t exact_tail_shadows = 0;
  // Sliding-window pools. A sequence that grows by at most max_grow_tokens at a time never
  // holds more than kv_sequence_cap_blocks() blocks of a sliding-window group, so with both
  // > 0 such a group's pool holds window_sequences of those sets (when that is fewer than
  // n): Gemma 3 at 32k tokens keeps at most 65 blocks of 16 tokens per sequence in its local
  // layers, not 2,048. More sequences than window_sequences still run; past the window they
  // wait for blocks (preemption) as any sequence the pool cannot hold does. 0: no cap.
  std::int64_t window_sequences = 0;
  std::int64_t max_grow_tokens = 0;
};

// One group holding layers 0 .. n_layers - 1 with one dtype and a window (0 = full).
std::vector<LayerGroupConfig> uniform_layer_groups(std::int64_t n_layers, KvDtype dtype,
                                                   std::int64_t window = 0);

// Throws UsageError naming the field when the config is inconsistent: no groups, a layer
// missing, repeated or out of range, a negative window, sizes < 1, both or neither of
// budget_bytes / n_blocks.
void validate(const KvCacheConfig& config);

// Total layers (the sum of the groups' sizes).
std::int64_t kv_config_n_layers(const KvCacheConfig& config);

// The block layout of one group.
KvBlockLayout kv_group_layout(const KvCacheConfig& config, std::size_t group);

// Whether the manager keeps a group's bytes in host memory (host_storage, not on_device).
bool kv_group_on_host(const KvCacheConfig& config, std::size_t group);

// Whether a group keeps an exact tail under the config (a quantized side, the tail on).
bool kv_group_has_exact_tail(const KvCacheConfig& config, std::size_t group);

// Bytes of one group's exact-tail copies (0 when it has none).
std::int64_t kv_group_exact_tail_bytes(const KvCacheConfig& config, std::size_t group);
// Bytes of all groups' exact-tail copies (0 when off).
std::int64_t kv_exact_tail_bytes(const KvCacheConfig& config);
// The same of the groups in host memory (kv_group_on_host), or of those on the device: a
// split's sides hold their own groups' copies (run/split_backend.h).
std::int64_t kv_exact_tail_bytes(const KvCacheConfig& config, bool on_host);

// The most blocks one sequence holds in a group at any moment: ceil(max_context /
// block_size) for full attention or without max_grow_tokens; for a window W and grows of
// at most G tokens
//   min(ceil(max_context / block_size), ceil((W + G + block_size - 2) / block_size))
// (a grow from length T first releases the blocks that end before T - W + 1, then appends
// up to G tokens; the most are held when T - W + 1 falls one slot short of a block's end).
std::int64_t kv_sequence_cap_blocks(const KvCacheConfig& config, std::size_t group);

// Each group's pool when the full-attention groups get n blocks (see above). [n_groups]
std::vector<std::int64_t> kv_group_pool_blocks(const KvCacheConfig& config, std::int64_t n);

// Bytes of those pools, the exact tail's copies not included.
std::int64_t kv_group_pools_bytes(const KvCacheConfig& config, std::int64_t n);

// n, the blocks each full-attention group's pool gets (see above; with an exact tail, from
// the budget left after its copies); kv_group_pool_blocks(config, n) gives every group's.
// With only capped window groups, the largest cap. CapacityError when the budget does not
// hold one block per group, naming the budget and the bytes one block per group needs.
std::int64_t kv_blocks_per_group(const KvCacheConfig& config);

}  // namespace kvscope
