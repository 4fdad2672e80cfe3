#include "kv/panel_snapshot_json.h"

#include <cstdio>
#include <map>

namespace kvscope {
namespace {

// A small writer for this one format: objects and arrays with an indent, keys in the order
// written. (engine/kv takes no JSON library for the few dozen fields.)
class JsonOut {
 public:
  void open(const std::string& key, char bracket) {
    item(key);
    out_ += bracket;
    ++depth_;
    first_ = true;
  }
  void close(char bracket) {
    --depth_;
    if (!first_) newline();
    out_ += bracket;
    first_ = false;
  }
  void number(const std::string& key, std::int64_t v) {
    item(key);
    out_ += std::to_string(v);
  }
  void fraction(const std::string& key, double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    item(key);
    out_ += buf;
  }
  void boolean(const std::string& key, bool v) {
    item(key);
    out_ += v ? "true" : "false";
  }
  void text(const std::string& key, const std::string& v) {
    item(key);
    quote(v);
  }
  std::string finish() { return out_ + "\n"; }

 private:
  void newline() {
    out_ += '\n';
    out_.append(static_cast<std::size_t>(depth_) * 2, ' ');
  }
  // key "" inside arrays and at the top.
  void item(const std::string& key) {
    if (depth_ > 0) {
      if (!first_) out_ += ',';
      newline();
    }
    first_ = false;
    if (!key.empty()) {
      quote(key);
      out_ += ": ";
    }
  }
  void quote(const std::string& s) {
    out_ += '"';
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if (u < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", u);
        out_ += buf;
      } else {
        out_ += c;  // UTF-8 passes through
      }
    }
    out_ += '"';
  }

  std::string out_;
  int depth_ = 0;
  bool first_ = true;
};

void write_contiguous(JsonOut& j, const ContiguousCost& c) {
  j.open("contiguous", '{');
  j.number("reserved_slots", c.reserved_slots);
  j.number("used_slots", c.used_slots);
  j.number("wasted_slots", c.wasted_slots);
  j.number("reserved_bytes", c.reserved_bytes);
  j.number("used_bytes", c.used_bytes);
  j.number("wasted_bytes", c.wasted_bytes);
  j.fraction("waste_fraction", c.waste_fraction());
  j.close('}');
}

template <typename Counts>
void write_counters(JsonOut& j, const Counts& c) {
  j.number("n_blocks", c.n_blocks);
  j.number("n_used", c.n_used);
  j.number("n_free", c.n_free);
  j.number("n_shared", c.n_shared);
  j.number("allocated_slots", c.allocated_slots);
  j.number("filled_slots", c.filled_slots);
  j.fraction("internal_fragmentation", c.internal_fragmentation);
  j.number("shared_savings_bytes", c.shared_savings_bytes);
}

void write_group(JsonOut& j, const LayerGroupSnapshot& g) {
  j.open("", '{');
  j.open("layers", '[');
  for (const std::int64_t layer : g.layers) j.number("", layer);
  j.close(']');
  j.text("k_dtype", std::string(kv_dtype_name(g.k_dtype)));
  j.text("v_dtype", std::string(kv_dtype_name(g.v_dtype)));
  j.number("window", g.window);
  j.number("block_bytes", g.block_bytes);
  write_counters(j, g);
  write_contiguous(j, g.contiguous);
  std::map<SeqId, std::int64_t> owners;  // used blocks by their lowest owning sequence
  for (const BlockInfo& b : g.blocks) {
    if (!b.is_free()) ++owners[b.owner];
  }
  j.open("blocks_by_owner", '{');
  for (const auto& [seq, n] : owners) j.number(std::to_string(seq), n);
  j.close('}');
  j.close('}');
}

}  // namespace

std::string panel_snapshot_json(const CacheSnapshot& s, const PanelSnapshotContext& context) {
  JsonOut j;
  j.open("", '{');
  j.text("format", "kvscope-panel-snapshot");
  j.number("version", kPanelSnapshotVersion);
  j.text("model", context.model);
  j.text("device", context.device);
  j.number("block_size", s.block_size);
  j.number("n_kv_heads", s.n_kv_heads);
  j.number("head_dim", s.head_dim);
  j.number("max_context", s.max_context);
  j.open("totals", '{');
  write_counters(j, s);
  j.number("pool_bytes", s.pool_bytes);
  j.number("used_bytes", s.used_bytes);
  write_contiguous(j, s.contiguous);
  j.close('}');
  j.open("groups", '[');
  for (const LayerGroupSnapshot& g : s.groups) write_group(j, g);
  j.close(']');
  j.open("layers", '[');
  for (const LayerKvSnapshot& l : s.layers) {
    j.open("", '{');
    j.number("layer", l.layer);
    j.number("group", l.group);
    j.number("bytes_in_use", l.bytes_in_use);
    j.close('}');
  }
  j.close(']');
  j.open("sequences", '[');
  for (const SequenceSnapshot& q : s.sequences) {
    j.open("", '{');
    j.number("id", q.id);
    j.number("n_tokens", q.n_tokens);
    j.boolean("preempted", q.preempted);
    j.close('}');
  }
  j.close(']');
  j.open("memory", '{');
  for (const auto& [term, bytes] : context.memory_bytes) {
    j.number(term, static_cast<std::int64_t>(bytes));
  }
  j.close('}');
  j.close('}');
  return j.finish();
}

}  // namespace kvscope
