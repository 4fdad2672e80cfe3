#include "serve/snapshot_json.h"

#include <nlohmann/json.hpp>

namespace kvscope::serve {

namespace {

using nlohmann::json;

json contiguous_json(const ContiguousCost& c) {
  return {{"reserved_slots", c.reserved_slots},  {"used_slots", c.used_slots},
          {"wasted_slots", c.wasted_slots},      {"reserved_bytes", c.reserved_bytes},
          {"used_bytes", c.used_bytes},          {"wasted_bytes", c.wasted_bytes},
          {"waste_fraction", c.waste_fraction()}};
}

json group_json(const LayerGroupSnapshot& g, bool with_blocks) {
  json out = {{"layers", g.layers},
              {"k_dtype", kv_dtype_name(g.k_dtype)},
              {"v_dtype", kv_dtype_name(g.v_dtype)},
              {"window", g.window},
              {"block_bytes", g.block_bytes},
              {"n_blocks", g.n_blocks},
              {"n_used", g.n_used},
              {"n_free", g.n_free},
              {"n_shared", g.n_shared},
              {"allocated_slots", g.allocated_slots},
              {"filled_slots", g.filled_slots},
              {"internal_fragmentation", g.internal_fragmentation},
              {"shared_savings_bytes", g.shared_savings_bytes},
              {"contiguous", contiguous_json(g.contiguous)}};
  if (with_blocks) {
    json blocks = json::array();
    for (const BlockInfo& b : g.blocks) blocks.push_back({b.owner, b.refcount, b.filled_slots});
    out["blocks"] = std::move(blocks);
  }
  return out;
}

json layer_json(const LayerKvSnapshot& l) {
  return {{"layer", l.layer},
          {"group", l.group},
          {"bytes_in_use", l.bytes_in_use},
          {"k_rms_error", l.k.rms_error()},
          {"v_rms_error", l.v.rms_error()}};
}

}  // namespace

nlohmann::json snapshot_json(const CacheSnapshot& s, bool with_blocks) {
  json groups = json::array();
  for (const LayerGroupSnapshot& g : s.groups) groups.push_back(group_json(g, with_blocks));
  json layers = json::array();
  for (const LayerKvSnapshot& l : s.layers) layers.push_back(layer_json(l));
  json sequences = json::array();
  for (const SequenceSnapshot& q : s.sequences) {
    sequences.push_back({{"id", q.id},
                         {"n_tokens", q.n_tokens},
                         {"preempted", q.preempted},
                         {"preempted_length", q.preempted_length}});
  }
  return {{"n_kv_heads", s.n_kv_heads},
          {"head_dim", s.head_dim},
          {"block_size", s.block_size},
          {"max_context", s.max_context},
          {"n_blocks", s.n_blocks},
          {"n_used", s.n_used},
          {"n_free", s.n_free},
          {"n_shared", s.n_shared},
          {"pool_bytes", s.pool_bytes},
          {"used_bytes", s.used_bytes},
          {"allocated_slots", s.allocated_slots},
          {"filled_slots", s.filled_slots},
          {"internal_fragmentation", s.internal_fragmentation},
          {"shared_savings_bytes", s.shared_savings_bytes},
          {"contiguous", contiguous_json(s.contiguous)},
          {"groups", std::move(groups)},
          {"layers", std::move(layers)},
          {"sequences", std::move(sequences)}};
}

}  // namespace kvscope::serve
