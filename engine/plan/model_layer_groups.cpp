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

}  // namespace kvscope
