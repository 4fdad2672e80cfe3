// KvCacheManager::snapshot(): walks pools and block tables once and copies what the live
// panel needs into plain values (cache_snapshot.h has the definitions).
#include <algorithm>

#include "kv/kv_cache_manager.h"

namespace kvscope {

LayerGroupSnapshot KvCacheManager::group_snapshot(
    std::int64_t group, std::span<const std::int64_t> live_lengths) const {
  const Group& g = group_at(group);
  const LayerGroupConfig& cfg = config_.groups[static_cast<std::size_t>(group)];
  LayerGroupSnapshot gs;
  gs.layers = cfg.layers;
  gs.k_dtype = cfg.k_dtype;
  gs.v_dtype = cfg.v_dtype;
  gs.window = cfg.window;
  gs.block_bytes = g.layout.block_bytes();
  gs.blocks.resize(static_cast<std::size_t>(g.pool.n_blocks()));
  for (std::size_t i = 0; i < gs.blocks.size(); ++i) {
    gs.blocks[i].id = static_cast<BlockId>(i);
    gs.blocks[i].refcount = g.pool.refcount(static_cast<BlockId>(i));
    // the shadow index, not its bytes: a device backend holds those
    gs.blocks[i].exact_copy = g.tail && g.tail->shadow_index(static_cast<BlockId>(i)) >= 0;
  }
  if (g.tail) {
    gs.exact_copies = g.tail->n_shadows();
    gs.exact_copy_bytes = g.tail->layout().block_bytes();
  }
  // seqs_ is ordered by id, so the first sequence to claim a block is the lowest id.
  for (const auto& [id, seq] : seqs_) {
    const BlockTable& t = seq.tables[static_cast<std::size_t>(group)];
    for (std::int64_t i = t.first_held(); i < t.n_blocks(); ++i) {
      BlockInfo& info = gs.blocks[static_cast<std::size_t>(t.block(i))];
      if (info.owner < 0) info.owner = id;
      info.filled_slots = std::max(info.filled_slots, static_cast<std::int32_t>(t.filled(i)));
    }
  }
  summarize_group(gs, config_.block_size);
  gs.contiguous = contiguous_.group_cost(static_cast<std::size_t>(group), live_lengths);
  return gs;
}

CacheSnapshot KvCacheManager::snapshot() const {
  CacheSnapshot s;
  s.n_kv_heads = config_.n_kv_heads;
  s.head_dim = config_.head_dim;
  s.block_size = config_.block_size;
  s.max_context = config_.max_context;

  std::vector<std::int64_t> live_lengths;  // running sequences, as the contiguous policy sees them
  for (const auto& [id, seq] : seqs_) {
    const std::int64_t n = seq.tables[0].n_tokens();
    s.sequences.push_back({id, n, seq.preempted, seq.preempted_length});
    if (!seq.preempted) live_lengths.push_back(n);
  }
  for (std::int64_t g = 0; g < n_groups(); ++g) s.groups.push_back(group_snapshot(g, live_lengths));

  for (std::int64_t layer = 0; layer < n_layers(); ++layer) {
    const std::int64_t g = group_of_layer(layer);
    LayerKvSnapshot ls;
    ls.layer = layer;
    ls.group = g;
    ls.bytes_in_use = s.groups[static_cast<std::size_t>(g)].n_used * layout(g).layer_bytes();
    ls.k = quant_error_k(layer);
    ls.v = quant_error_v(layer);
    s.layers.push_back(ls);
  }
  summarize_totals(s);
  return s;
}

}  // namespace kvscope
