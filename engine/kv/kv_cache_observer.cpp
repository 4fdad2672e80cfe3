#include "kv/kv_cache_observer.h"

#include <algorithm>
#include <span>
#include <vector>

#include "kv/kv_cache_manager.h"

namespace kvscope {

namespace {

LayerGroupSnapshot group_snapshot(const KvCacheManager& kv, std::int64_t group,
                                  const std::vector<SeqId>& seq_ids) {
  const BlockPool& pool = kv.pool(group);
  const ExactTail* tail = kv.exact_tail(group);
  const LayerGroupConfig& cfg = kv.config().groups[static_cast<std::size_t>(group)];
  LayerGroupSnapshot gs;
  gs.layers = cfg.layers;
  gs.k_dtype = cfg.k_dtype;
  gs.v_dtype = cfg.v_dtype;
  gs.window = cfg.window;
  gs.block_bytes = kv.layout(group).block_bytes();
  gs.blocks.resize(static_cast<std::size_t>(pool.n_blocks()));
  for (std::size_t i = 0; i < gs.blocks.size(); ++i) {
    gs.blocks[i].id = static_cast<BlockId>(i);
    gs.blocks[i].refcount = pool.refcount(static_cast<BlockId>(i));
    // the shadow index, not its bytes: a device backend holds those
    gs.blocks[i].exact_copy = tail != nullptr && tail->shadow_index(static_cast<BlockId>(i)) >= 0;
  }
  if (tail != nullptr) {
    gs.exact_copies = tail->n_shadows();
    gs.exact_copy_bytes = tail->layout().block_bytes();
  }
  // Ids ascend, so the first sequence to claim a block is the lowest id.
  for (const SeqId id : seq_ids) {
    const BlockTable& t = kv.block_table(id, group);
    for (std::int64_t i = t.first_held(); i < t.n_blocks(); ++i) {
      BlockInfo& info = gs.blocks[static_cast<std::size_t>(t.block(i))];
      if (info.owner < 0) info.owner = id;
      info.filled_slots = std::max(info.filled_slots, static_cast<std::int32_t>(t.filled(i)));
    }
  }
  summarize_group(gs, kv.config().block_size);
  return gs;
}

}  // namespace

KvCacheObserver::KvCacheObserver(const KvCacheConfig& config)
    : quant_error_(kv_config_n_layers(config)), contiguous_(ContiguousPolicy::for_config(config)) {}

CacheSnapshot KvCacheObserver::snapshot(const KvCacheManager& kv) const {
  const KvCacheConfig& config = kv.config();
  CacheSnapshot s;
  s.n_kv_heads = config.n_kv_heads;
  s.head_dim = config.head_dim;
  s.block_size = config.block_size;
  s.max_context = config.max_context;

  const std::vector<SeqId> ids = kv.sequence_ids();  // ascending
  std::vector<std::int64_t> live_lengths;  // running sequences, as the contiguous policy sees them
  for (const SeqId id : ids) {
    const std::int64_t n = kv.block_table(id, 0).n_tokens();
    const bool preempted = kv.is_preempted(id);
    s.sequences.push_back({id, n, preempted, kv.preempted_length(id)});
    if (!preempted) live_lengths.push_back(n);
  }
  for (std::int64_t g = 0; g < kv.n_groups(); ++g) {
    LayerGroupSnapshot gs = group_snapshot(kv, g, ids);
    gs.contiguous = contiguous_.group_cost(static_cast<std::size_t>(g), live_lengths);
    s.groups.push_back(std::move(gs));
  }

  for (std::int64_t layer = 0; layer < kv.n_layers(); ++layer) {
    const std::int64_t g = kv.group_of_layer(layer);
    LayerKvSnapshot ls;
    ls.layer = layer;
    ls.group = g;
    ls.bytes_in_use = s.groups[static_cast<std::size_t>(g)].n_used * kv.layout(g).layer_bytes();
    ls.k = quant_error_k(layer);
    ls.v = quant_error_v(layer);
    s.layers.push_back(ls);
  }
  summarize_totals(s);
  return s;
}

CacheSnapshot snapshot_of(const KvCacheManager& kv) {
  return KvCacheObserver(kv.config()).snapshot(kv);
}

}  // namespace kvscope
