// The "panel snapshot": one JSON object with the numbers the live panel draws from a
// CacheSnapshot (blocks per layer group, shared blocks, fragmentation, what a contiguous
// allocator would reserve) and the memory terms beside it, so a run can be compared later.
// The app's File > Export > Panel snapshot and `kvscope-cli run --snapshot F` both write it.
//
//   {"format": "kvscope-panel-snapshot", "version": 1, "model": ..., "device": ...,
//    "block_size", "n_kv_heads", "head_dim", "max_context",
//    "totals": {n_blocks, n_used, n_free, n_shared, allocated_slots, filled_slots,
//               internal_fragmentation, shared_savings_bytes, pool_bytes, used_bytes,
//               exact_copies, exact_copies_used, contiguous: {...}},
//    "groups": [{layers: [...], k_dtype, v_dtype, window, block_bytes, <the counters above>,
//                exact_copies, exact_copies_used, exact_copy_bytes, contiguous,
//                blocks_by_owner: {"<seq id>": n}}],
//  (exact copies: the fp16 copies of an exact tail, kv/exact_tail.h; 0 without one; bytes
//  include them)
//    "layers": [{layer, group, bytes_in_use}], "sequences": [{id, n_tokens, preempted}],
//    "memory": {"<term>": bytes, ...},
//    "split": {gpu_layers, n_layers, cpu_device, cpu_memory: {"<term>": bytes, ...}}}
//  ("split" only for a model split between GPU and CPU, run/split_backend.h: "device" and
//  "memory" are then its GPU's side, "split" its CPU's; the groups' layers say each side's)
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kv/cache_snapshot.h"

namespace kvscope {

struct PanelSnapshotContext {
  std::string model;   // file name (or label) of the model
  std::string device;  // MemoryInfo::device
  // Memory terms in the panel's order: weights, kv_pool, workspace, used_by_others, free, total.
  std::vector<std::pair<std::string, std::uint64_t>> memory_bytes;
  // A split: layers [0, gpu_layers) of n_layers on the GPU (device and memory_bytes are its
  // side's), the CPU side's device and memory terms. gpu_layers 0: no split.
  std::int64_t gpu_layers = 0;
  std::int64_t n_layers = 0;
  std::string cpu_device;
  std::vector<std::pair<std::string, std::uint64_t>> cpu_memory_bytes;
};

inline constexpr int kPanelSnapshotVersion = 1;

// Pretty-printed (2-space indent), ending in a newline.
std::string panel_snapshot_json(const CacheSnapshot& snapshot, const PanelSnapshotContext& context);

}  // namespace kvscope
