// The KV cache's layer groups a model's attention implies: one group when every layer sees
// the same window, else one group of the sliding layers (window sliding_window, whose
// blocks are released once they fall out of it) and one of the global layers (window 0).
// Gemma 3 270M: layers 0-4, 6-10, 12-16 slide over 512 tokens, layers 5, 11 and 17 see
// everything. The engine allocates with these groups and the planner counts them, so both
// answer the same bytes.
#pragma once

#include <vector>

#include "kv/kv_cache_config.h"
#include "model/model_spec.h"

namespace kvscope {

// Groups ordered by their first layer; each holds k_dtype / v_dtype.
std::vector<LayerGroupConfig> model_layer_groups(const ModelSpec& spec, KvDtype k_dtype,
                                                 KvDtype v_dtype);

// The groups of a model split between the GPU (layers [0, gpu_layers)) and the CPU (the
// rest): each group's GPU layers become a group of their own marked on_device (its blocks in
// VRAM), first, then each group's CPU layers (blocks in RAM); dtypes and windows as before.
// No group spans both sides, so each side's backend reads only its own groups' pools.
std::vector<LayerGroupConfig> split_layer_groups(const std::vector<LayerGroupConfig>& groups,
                                                 std::int64_t gpu_layers);

}  // namespace kvscope
