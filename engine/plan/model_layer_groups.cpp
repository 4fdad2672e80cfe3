#include "plan/model_layer_groups.h"

namespace kvscope {

std::vector<LayerGroupConfig> model_layer_groups(const ModelSpec& spec, KvDtype k_dtype,
                                                 KvDtype v_dtype) {
  std::vector<LayerGroupConfig> groups;
  for (std::int64_t l = 0; l < spec.n_layers; ++l) {
    const std::int64_t window = spec.layer_window(l);
    LayerGroupConfig* group = nullptr;
    for (LayerGroupConfig& g : groups) {
      if (g.window == window) group = &g;
    }
    if (group == nullptr) {
      group = &groups.emplace_back();
      group->k_dtype = k_dtype;
      group->v_dtype = v_dtype;
      group->window = window;
    }
    group->layers.push_back(l);
  }
  return groups;
}

std::vector<LayerGroupConfig> split_layer_groups(const std::vector<LayerGroupConfig>& groups,
                                                 std::int64_t gpu_layers) {
  std::vector<LayerGroupConfig> gpu, cpu;
  for (const LayerGroupConfig& g : groups) {
    LayerGroupConfig on_gpu = g, on_cpu = g;
    on_gpu.layers.clear();
    on_cpu.layers.clear();
    for (std::int64_t layer : g.layers)
      (layer < gpu_layers ? on_gpu : on_cpu).layers.push_back(layer);
    on_gpu.on_device = true;
    on_cpu.on_device = false;
    if (!on_gpu.layers.empty()) gpu.push_back(std::move(on_gpu));
    if (!on_cpu.layers.empty()) cpu.push_back(std::move(on_cpu));
  }
  gpu.insert(gpu.end(), cpu.begin(), cpu.end());
  return gpu;
}

}  // namespace kvscope
