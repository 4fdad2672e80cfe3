#include "panel/split_sides.h"

#include <QCoreApplication>

namespace kvscope::ui {

bool layer_on_gpu(std::int64_t layer, std::int64_t gpu_layers) {
  return layer < gpu_layers;
}

bool group_on_gpu(const LayerGroupSnapshot& group, std::int64_t gpu_layers) {
  return !group.layers.empty() && layer_on_gpu(group.layers.front(), gpu_layers);
}

std::vector<std::size_t> side_groups(const std::vector<LayerGroupSnapshot>& groups, SplitSide side,
                                     std::int64_t gpu_layers) {
  std::vector<std::size_t> out;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (group_on_gpu(groups[g], gpu_layers) == (side == SplitSide::Gpu)) out.push_back(g);
  }
  return out;
}

std::int64_t side_used_bytes(const CacheSnapshot& cache, SplitSide side, std::int64_t gpu_layers) {
  std::int64_t used = 0;
  for (const std::size_t g : side_groups(cache.groups, side, gpu_layers)) {
    const LayerGroupSnapshot& s = cache.groups[g];
    used += s.n_used * s.block_bytes + s.exact_copies_used * s.exact_copy_bytes;
  }
  return used;
}

QString side_layers_text(SplitSide side, const SplitMemory& split) {
  const std::int64_t first = side == SplitSide::Gpu ? 0 : split.gpu_layers;
  const std::int64_t last = (side == SplitSide::Gpu ? split.gpu_layers : split.n_layers) - 1;
  if (first == last) return QCoreApplication::translate("SplitSides", "layer %1").arg(first);
  return QCoreApplication::translate("SplitSides", "layers %1-%2").arg(first).arg(last);
}

QString side_memory_title(SplitSide side, const SplitMemory& split) {
  // The CPU side also holds what split_backend.h keeps off the GPU: the token table (a
  // gather of a few rows a step) and the output head (vocab x dim, with the last layer).
  return side == SplitSide::Gpu
             ? QCoreApplication::translate("SplitSides", "VRAM (GPU: %1)")
                   .arg(side_layers_text(side, split))
             : QCoreApplication::translate("SplitSides", "RAM (CPU: %1, token table, output head)")
                   .arg(side_layers_text(side, split));
}

}  // namespace kvscope::ui
