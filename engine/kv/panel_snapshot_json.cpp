#include "kv/panel_snapshot_json.h"

#include <map>
#include <utility>

#include <nlohmann/json.hpp>

namespace kvscope {
namespace {

// Keys stay in the order written, as the format above lists them.
using Json = nlohmann::ordered_json;

Json contiguous_json(const ContiguousCost& c) {
  return {{"reserved_slots", c.reserved_slots},  {"used_slots", c.used_slots},
          {"wasted_slots", c.wasted_slots},      {"reserved_bytes", c.reserved_bytes},
          {"used_bytes", c.used_bytes},          {"wasted_bytes", c.wasted_bytes},
          {"waste_fraction", c.waste_fraction()}};
}

template <typename Counts>
void add_counters(Json& j, const Counts& c) {
  j["n_blocks"] = c.n_blocks;
  j["n_used"] = c.n_used;
  j["n_free"] = c.n_free;
  j["n_shared"] = c.n_shared;
  j["allocated_slots"] = c.allocated_slots;
  j["filled_slots"] = c.filled_slots;
  j["internal_fragmentation"] = c.internal_fragmentation;
  j["shared_savings_bytes"] = c.shared_savings_bytes;
}

Json group_json(const LayerGroupSnapshot& g) {
  Json j = {{"layers", g.layers},
            {"k_dtype", std::string(kv_dtype_name(g.k_dtype))},
            {"v_dtype", std::string(kv_dtype_name(g.v_dtype))},
            {"window", g.window},
            {"block_bytes", g.block_bytes}};
  add_counters(j, g);
  j["exact_copies"] = g.exact_copies;
  j["exact_copies_used"] = g.exact_copies_used;
  j["exact_copy_bytes"] = g.exact_copy_bytes;
  j["contiguous"] = contiguous_json(g.contiguous);
  std::map<SeqId, std::int64_t> owners;  // used blocks by their lowest owning sequence
  for (const BlockInfo& b : g.blocks) {
    if (!b.is_free()) ++owners[b.owner];
  }
  Json by_owner = Json::object();
  for (const auto& [seq, n] : owners) by_owner[std::to_string(seq)] = n;
  j["blocks_by_owner"] = std::move(by_owner);
  return j;
}

Json terms_json(const std::vector<std::pair<std::string, std::uint64_t>>& terms) {
  Json memory = Json::object();
  for (const auto& [term, bytes] : terms) memory[term] = bytes;
  return memory;
}

}  // namespace

std::string panel_snapshot_json(const CacheSnapshot& s, const PanelSnapshotContext& context) {
  Json j = {{"format", "kvscope-panel-snapshot"},
            {"version", kPanelSnapshotVersion},
            {"model", context.model},
            {"device", context.device},
            {"block_size", s.block_size},
            {"n_kv_heads", s.n_kv_heads},
            {"head_dim", s.head_dim},
            {"max_context", s.max_context}};
  Json totals = Json::object();
  add_counters(totals, s);
  totals["pool_bytes"] = s.pool_bytes;
  totals["used_bytes"] = s.used_bytes;
  totals["exact_copies"] = s.exact_copies;
  totals["exact_copies_used"] = s.exact_copies_used;
  totals["contiguous"] = contiguous_json(s.contiguous);
  j["totals"] = std::move(totals);
  Json groups = Json::array();
  for (const LayerGroupSnapshot& g : s.groups) groups.push_back(group_json(g));
  j["groups"] = std::move(groups);
  Json layers = Json::array();
  for (const LayerKvSnapshot& l : s.layers) {
    layers.push_back({{"layer", l.layer}, {"group", l.group}, {"bytes_in_use", l.bytes_in_use}});
  }
  j["layers"] = std::move(layers);
  Json sequences = Json::array();
  for (const SequenceSnapshot& q : s.sequences) {
    sequences.push_back({{"id", q.id}, {"n_tokens", q.n_tokens}, {"preempted", q.preempted}});
  }
  j["sequences"] = std::move(sequences);
  j["memory"] = terms_json(context.memory_bytes);
  if (context.gpu_layers > 0) {
    j["split"] = {{"gpu_layers", context.gpu_layers},
                  {"n_layers", context.n_layers},
                  {"cpu_device", context.cpu_device},
                  {"cpu_memory", terms_json(context.cpu_memory_bytes)}};
  }
  // A model name that is not UTF-8 is written with U+FFFD rather than refused.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace kvscope
