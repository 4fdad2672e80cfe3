// The two sides of a model split between GPU and CPU (run/split_backend.h), as the live
// panel draws them: layers [0, k) and their KV groups on the GPU, layers [k, n), the token
// table and the output head on the CPU. A side's numbers are the engine's: its MemoryInfo
// (SplitMemory::gpu / cpu) and the snapshot fields of its own KV groups.
#pragma once

#include <QString>

#include <cstdint>
#include <vector>

#include "kv/cache_snapshot.h"
#include "run/split_backend.h"

namespace kvscope::ui {

enum class SplitSide { Gpu, Cpu };

// Whether a KV layer group of a split is the GPU's. split_layer_groups
// (plan/model_layer_groups.h) gives each side groups of its own layers, so a group's layers
// are all below gpu_layers or none is.
bool group_on_gpu(const LayerGroupSnapshot& group, std::int64_t gpu_layers);
bool layer_on_gpu(std::int64_t layer, std::int64_t gpu_layers);

// The indices of `side`'s groups in `groups` (a CacheSnapshot's), in their order.
std::vector<std::size_t> side_groups(const std::vector<LayerGroupSnapshot>& groups, SplitSide side,
                                     std::int64_t gpu_layers);
// The KV bytes in use on `side`: its groups' used blocks and the fp16 copies they hold,
// summed as CacheSnapshot::used_bytes sums all groups (summarize_totals).
std::int64_t side_used_bytes(const CacheSnapshot& cache, SplitSide side, std::int64_t gpu_layers);

// "layers 0-11" / "layers 12-29": the side's layer range ("layer 4" for one).
QString side_layers_text(SplitSide side, const SplitMemory& split);
// The memory chart's title of a side: "VRAM (GPU: layers 0-11)", "RAM (CPU: layers 12-29,
// token table, output head)".
QString side_memory_title(SplitSide side, const SplitMemory& split);

}  // namespace kvscope::ui
