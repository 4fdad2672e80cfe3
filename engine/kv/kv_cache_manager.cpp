#include "kv/kv_cache_manager.h"

#include <utility>

#include "util/error.h"

namespace kvscope {
namespace {

KvCacheConfig validated(KvCacheConfig config) {
  validate(config);
  return config;
}

}  // namespace

KvCacheManager::KvCacheManager(KvCacheConfig config) : config_(validated(std::move(config))) {
  const std::vector<std::int64_t> pool_blocks =
      kv_group_pool_blocks(config_, kv_blocks_per_group(config_));
  const std::int64_t n_layers = kv_config_n_layers(config_);
  layer_group_.resize(static_cast<std::size_t>(n_layers));
  layer_in_group_.resize(static_cast<std::size_t>(n_layers));
  for (std::size_t g = 0; g < config_.groups.size(); ++g) {
    const KvBlockLayout layout = kv_group_layout(config_, g);
    const std::int64_t n_blocks = pool_blocks[g];
    Group group{layout, BlockPool(n_blocks), SlidingWindow(config_.groups[g].window), std::nullopt,
                std::nullopt};
    const bool on_host = kv_group_on_host(config_, g);
    if (on_host) group.storage.emplace(n_blocks, layout.block_bytes());
    if (kv_group_has_exact_tail(config_, g)) {
      group.tail.emplace(n_blocks, config_.exact_tail_shadows, config_.exact_tail_blocks, layout,
                         on_host);
    }
    groups_.push_back(std::move(group));
    const std::vector<std::int64_t>& layers = config_.groups[g].layers;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      layer_group_[static_cast<std::size_t>(layers[i])] = static_cast<std::int64_t>(g);
      layer_in_group_[static_cast<std::size_t>(layers[i])] = static_cast<std::int64_t>(i);
    }
  }
}

// --- shape ---------------------------------------------------------------------------

const KvCacheManager::Group& KvCacheManager::group_at(std::int64_t group) const {
  if (group < 0 || group >= n_groups()) {
    throw_error<UsageError>("KV cache: layer group {} out of range [0, {})", group, n_groups());
  }
  return groups_[static_cast<std::size_t>(group)];
}

KvCacheManager::Group& KvCacheManager::group_at(std::int64_t group) {
  return const_cast<Group&>(std::as_const(*this).group_at(group));
}

std::int64_t KvCacheManager::check_layer(std::int64_t layer) const {
  if (layer < 0 || layer >= n_layers()) {
    throw_error<UsageError>("KV cache: layer {} out of range [0, {})", layer, n_layers());
  }
  return layer;
}

std::int64_t KvCacheManager::group_of_layer(std::int64_t layer) const {
  return layer_group_[static_cast<std::size_t>(check_layer(layer))];
}

std::int64_t KvCacheManager::layer_in_group(std::int64_t layer) const {
  return layer_in_group_[static_cast<std::size_t>(check_layer(layer))];
}

std::int64_t KvCacheManager::first_visible_position(std::int64_t group,
                                                    std::int64_t query_pos) const {
  return group_at(group).window.first_visible_position(query_pos);
}

// --- sequences -----------------------------------------------------------------------

const KvCacheManager::Sequence& KvCacheManager::seq_at(SeqId seq) const {
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) throw_error<UsageError>("KV cache: unknown sequence {}", seq);
  return it->second;
}

KvCacheManager::Sequence& KvCacheManager::seq_at(SeqId seq) {
  return const_cast<Sequence&>(std::as_const(*this).seq_at(seq));
}

KvCacheManager::Sequence& KvCacheManager::running_seq_at(SeqId seq, const char* operation) {
  Sequence& s = seq_at(seq);
  if (s.preempted) {
    throw_error<UsageError>("KV cache: {} of sequence {}, which is preempted (resume it first)",
                            operation, seq);
  }
  return s;
}

void KvCacheManager::add_sequence(SeqId seq) {
  if (seqs_.contains(seq)) throw_error<UsageError>("KV cache: sequence {} already exists", seq);
  Sequence s;
  for (std::int64_t g = 0; g < n_groups(); ++g) s.tables.emplace_back(config_.block_size);
  seqs_.emplace(seq, std::move(s));
}

std::vector<SeqId> KvCacheManager::sequence_ids() const {
  std::vector<SeqId> ids;
  ids.reserve(seqs_.size());
  for (const auto& entry : seqs_) ids.push_back(entry.first);
  return ids;
}

std::int64_t KvCacheManager::n_tokens(SeqId seq) const {
  return seq_at(seq).tables[0].n_tokens();
}
bool KvCacheManager::is_preempted(SeqId seq) const {
  return seq_at(seq).preempted;
}
std::int64_t KvCacheManager::preempted_length(SeqId seq) const {
  return seq_at(seq).preempted_length;
}

std::int64_t KvCacheManager::needed_blocks(const BlockTable& t, std::int64_t group,
                                           std::int64_t n) const {
  if (n <= 0) return 0;
  const bool cow =
      t.n_tokens() % t.block_size() != 0 && group_at(group).pool.refcount(t.tail()) > 1;
  return t.blocks_to_append(n) + (cow ? 1 : 0);
}

std::int64_t KvCacheManager::blocks_needed(SeqId seq, std::int64_t n, std::int64_t group) const {
  group_at(group);  // range check
  return needed_blocks(seq_at(seq).tables[static_cast<std::size_t>(group)], group, n);
}

// What stops a grow by n, if anything: the context length (group -1) or a group whose
// free blocks, counting those its window releases, are fewer than it needs.
std::optional<KvCacheManager::Shortfall> KvCacheManager::shortfall(const Sequence& s,
                                                                   std::int64_t n) const {
  if (n > config_.max_context - s.tables[0].n_tokens()) return Shortfall{};
  for (std::int64_t g = 0; g < n_groups(); ++g) {
    const BlockTable& table = s.tables[static_cast<std::size_t>(g)];
    const std::int64_t needed = needed_blocks(table, g, n);
    const Group& group = group_at(g);
    const std::int64_t available =
        group.pool.n_free() + group.window.blocks_freed(table, group.pool);
    if (needed > available) return Shortfall{g, needed, available};
  }
  return std::nullopt;
}

bool KvCacheManager::can_grow(SeqId seq, std::int64_t n) const {
  return n >= 0 && !shortfall(seq_at(seq), n);
}

void KvCacheManager::grow(SeqId seq, std::int64_t n, std::vector<BlockCopy>* copies) {
  Sequence& s = running_seq_at(seq, "grow");
  if (n < 0) throw_error<UsageError>("KV cache: grow of sequence {} by {} tokens", seq, n);
  if (n == 0) return;
  if (const auto missing = shortfall(s, n)) {
    const std::int64_t t = s.tables[0].n_tokens();
    if (missing->group < 0) {
      throw_error<CapacityError>(
          "sequence {}: growing from {} by {} tokens exceeds the context length {}", seq, t, n,
          config_.max_context);
    }
    throw_error<CapacityError>(
        "KV cache full: sequence {} needs {} more blocks in layer group {} to grow from {} to {} "
        "tokens, but only {} of {} blocks are free",
        seq, missing->needed, missing->group, t, t + n, missing->available,
        group_at(missing->group).pool.n_blocks());
  }
  for (std::int64_t g = 0; g < n_groups(); ++g) {
    grow_group(s.tables[static_cast<std::size_t>(g)], g, n, copies);
  }
}

void KvCacheManager::grow_group(BlockTable& t, std::int64_t group, std::int64_t n,
                                std::vector<BlockCopy>* copies) {
  Group& g = group_at(group);
  for (std::int64_t i = g.window.blocks_to_drop(t); i > 0; --i) release_block(g, t.drop_front());

  if (t.n_tokens() % t.block_size() != 0 && g.pool.refcount(t.tail()) > 1) {
    const BlockId src = t.tail();
    const BlockId dst = g.pool.allocate();
    if (g.storage) g.storage->copy_block(src, dst);
    BlockCopy copy{group, src, dst};
    if (g.tail) {
      g.tail->copy(src, dst);
      copy.src_shadow = g.tail->shadow_index(src);
      copy.dst_shadow = g.tail->shadow_index(dst);
    }
    if (copies) copies->push_back(copy);
    release_block(g, src);
    t.replace_tail(dst);
  }

  // copies the new positions' queries no longer read go back before new blocks take theirs
  if (g.tail) g.tail->trim(t, t.n_tokens());
  std::vector<BlockId> fresh(static_cast<std::size_t>(t.blocks_to_append(n)));
  for (BlockId& id : fresh) {
    id = g.pool.allocate();
    if (g.tail) g.tail->attach(id);
  }
  t.append(fresh, n);
}

void KvCacheManager::fork(SeqId parent, SeqId child) {
  const Sequence& p = running_seq_at(parent, "fork");
  if (seqs_.contains(child)) {
    throw_error<UsageError>("KV cache: fork of sequence {} into {}, which already exists", parent,
                            child);
  }
  for (std::int64_t g = 0; g < n_groups(); ++g) {
    const BlockTable& t = p.tables[static_cast<std::size_t>(g)];
    for (std::int64_t i = t.first_held(); i < t.n_blocks(); ++i)
      groups_[static_cast<std::size_t>(g)].pool.add_ref(t.block(i));
  }
  seqs_.emplace(child, p);
}

void KvCacheManager::release_block(Group& g, BlockId id) {
  if (g.pool.release(id) && g.tail) g.tail->detach(id);
}

void KvCacheManager::release_all(Sequence& s) {
  for (std::size_t g = 0; g < s.tables.size(); ++g) {
    for (const BlockId id : s.tables[g].clear()) release_block(groups_[g], id);
  }
}

bool KvCacheManager::can_truncate(SeqId seq, std::int64_t n) const {
  const Sequence& s = seq_at(seq);
  if (s.preempted) return false;
  for (std::size_t g = 0; g < s.tables.size(); ++g) {
    const BlockTable& t = s.tables[g];
    if (n < 0 || n > t.n_tokens() || !groups_[g].window.holds_window_after_truncate(t, n)) {
      return false;
    }
  }
  return true;
}

void KvCacheManager::truncate(SeqId seq, std::int64_t n) {
  Sequence& s = running_seq_at(seq, "truncate");
  if (!can_truncate(seq, n)) {
    throw_error<UsageError>(
        "KV cache: sequence {} cannot be truncated to {} tokens: it holds {}, and a window has "
        "released the blocks before block {}",
        seq, n, s.tables[0].n_tokens(), s.tables.back().first_held());
  }
  for (std::size_t g = 0; g < s.tables.size(); ++g) {
    for (const BlockId id : s.tables[g].truncate(n)) release_block(groups_[g], id);
  }
}

void KvCacheManager::free_sequence(SeqId seq) {
  release_all(seq_at(seq));
  seqs_.erase(seq);
}

void KvCacheManager::preempt(SeqId seq) {
  Sequence& s = running_seq_at(seq, "preempt");
  const std::int64_t length = s.tables[0].n_tokens();
  release_all(s);
  s.preempted = true;
  s.preempted_length = length;
}

std::int64_t KvCacheManager::resume(SeqId seq) {
  Sequence& s = seq_at(seq);
  if (!s.preempted)
    throw_error<UsageError>("KV cache: resume of sequence {}, which is not preempted", seq);
  s.preempted = false;
  return std::exchange(s.preempted_length, 0);
}

// --- addressing and bytes ------------------------------------------------------------

const BlockTable& KvCacheManager::block_table(SeqId seq, std::int64_t group) const {
  group_at(group);
  return seq_at(seq).tables[static_cast<std::size_t>(group)];
}

KvSlot KvCacheManager::slot(SeqId seq, std::int64_t group, std::int64_t pos) const {
  const BlockTable& t = block_table(seq, group);
  if (pos < 0 || pos >= t.n_tokens()) {
    throw_error<UsageError>("KV cache: position {} of sequence {} outside its {} reserved tokens",
                            pos, seq, t.n_tokens());
  }
  const BlockId block = t.block(pos / t.block_size());
  if (block == kNoBlock) {
    throw_error<UsageError>(
        "KV cache: position {} of sequence {} was released by layer group {}'s window of {}", pos,
        seq, group, group_at(group).window.window());
  }
  return {block, pos % t.block_size()};
}

// --- statistics ----------------------------------------------------------------------

KvUsage KvCacheManager::usage(std::int64_t group) const {
  const BlockPool& pool = group_at(group).pool;
  return {pool.n_blocks(), pool.n_used(), pool.n_free()};
}

KvUsage KvCacheManager::usage() const {
  KvUsage total;
  for (std::int64_t g = 0; g < n_groups(); ++g) {
    const KvUsage u = usage(g);
    total.n_blocks += u.n_blocks;
    total.n_used += u.n_used;
    total.n_free += u.n_free;
  }
  return total;
}

}  // namespace kvscope
