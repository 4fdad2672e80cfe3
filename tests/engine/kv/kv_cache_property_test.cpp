// Drives KvCacheManager through long random sequences of add / grow / fork (sometimes
// truncated to a prefix) / free / preempt / resume (what a scheduler does under memory pressure)
// and checks, after every operation, the cheap invariants of what it touched, and every
// kFullCheckEvery operations all of them: refcounts equal the tables referencing each block, free
// <=> unreferenced <=> queued, counts add up, tables cover their tokens exactly, sliding windows
// release what they should and keep what queries need, and every held position still holds the tag
// that was written for it (so copy-on-write never lets one sequence change another's bytes).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "kv/kv_cache_observer.h"
#include "util/error.h"

namespace kvscope {
namespace {

// Enough operations to reach every state (shared tails, windows, preemption) many times,
// few enough for the sanitizer build.
constexpr std::int64_t kOps = 1'000'000;
constexpr std::int64_t kFullCheckEvery = 256;
constexpr std::size_t kMaxSequences = 12;
constexpr std::int64_t kWindow = 7;

// Group 0: layers {0, 2}, fp16, full attention. Group 1: layer 1, int8, window 7.
// 1 KV head of dim 4: every vector has >= 4 data bytes for a 32-bit tag. block_size 3 so
// chunks cross block boundaries all the time.
KvCacheConfig property_config() {
  KvCacheConfig c;
  c.groups = {{{0, 2}, KvDtype::F16, KvDtype::F16, 0},
              {{1}, KvDtype::Int8, KvDtype::Int8, kWindow}};
  c.n_kv_heads = 1;
  c.head_dim = 4;
  c.block_size = 3;
  c.max_context = 150;
  c.n_blocks = 40;
  return c;
}

// What the test expects of one sequence.
struct ModelSeq {
  bool preempted = false;
  std::int64_t preempted_length = 0;
  std::vector<std::uint32_t> tags;  // [n_tokens] tag written at each position
  std::int64_t keep_from = 0;       // largest (grow start - window + 1) seen: window group
};

// How often the interesting cases happened, so the test proves it exercised them.
struct Coverage {
  std::int64_t grows = 0, failed_grows = 0, copies = 0, window_drops = 0;
  std::int64_t forks = 0, truncations = 0, refused_truncations = 0;
  std::int64_t frees = 0, preempts = 0, resumes = 0;
};

class Harness {
 public:
  const Coverage& coverage() const { return cov_; }
  explicit Harness(std::uint64_t seed) : m_(property_config()), rng_(seed) {}

  void step(std::int64_t op);
  void check_cheap(SeqId seq);
  void check_full();

 private:
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  // A random sequence id from the model, filtered by preempted state; -1 if none.
  SeqId pick(bool preempted);
  void grow(SeqId seq, std::int64_t n);
  void truncate(SeqId seq, std::int64_t n);
  void write_tags(SeqId seq, std::int64_t from);
  std::uint32_t read_tag(SeqId seq, std::int64_t group, std::int64_t pos) const;
  void check_table(SeqId seq, std::int64_t group, std::vector<std::int32_t>& refs);
  std::string where() const { return "op " + std::to_string(op_); }

  KvCacheManager m_;
  std::map<SeqId, ModelSeq> model_;
  std::mt19937_64 rng_;
  SeqId next_id_ = 0;
  std::uint32_t next_tag_ = 1;
  std::int64_t op_ = 0;
  Coverage cov_;
};

SeqId Harness::pick(bool preempted) {
  std::vector<SeqId> ids;
  for (const auto& [id, s] : model_) {
    if (s.preempted == preempted) ids.push_back(id);
  }
  if (ids.empty()) return -1;
  return ids[static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(ids.size()) - 1))];
}

void Harness::step(std::int64_t op) {
  op_ = op;
  const std::int64_t dice = uniform(0, 99);
  if (dice < 10) {  // add
    if (model_.size() >= kMaxSequences) return;
    m_.add_sequence(next_id_);
    model_[next_id_];
    check_cheap(next_id_++);
  } else if (dice < 60) {  // grow: mostly decode steps, sometimes prefill chunks
    const SeqId seq = pick(false);
    if (seq < 0) return;
    grow(seq, uniform(0, 3) == 0 ? uniform(1, 20) : 1);
  } else if (dice < 70) {  // fork
    const SeqId parent = pick(false);
    if (parent < 0 || model_.size() >= kMaxSequences) return;
    m_.fork(parent, next_id_);
    ++cov_.forks;
    model_[next_id_] = model_[parent];
    check_cheap(parent);
    check_cheap(next_id_);
    const auto length = static_cast<std::int64_t>(model_[next_id_].tags.size());
    if (uniform(0, 1) == 0) truncate(next_id_, uniform(0, length));  // a kept prefix reused
    ++next_id_;
  } else if (dice < 82) {  // free
    const SeqId seq = pick(uniform(0, 3) == 0);
    if (seq < 0) return;
    m_.free_sequence(seq);
    model_.erase(seq);
    ++cov_.frees;
    ASSERT_FALSE(m_.has_sequence(seq)) << where();
  } else if (dice < 90) {  // preempt
    const SeqId seq = pick(false);
    if (seq < 0) return;
    m_.preempt(seq);
    ++cov_.preempts;
    ModelSeq& s = model_[seq];
    s = {true, static_cast<std::int64_t>(s.tags.size()), {}, 0};
    check_cheap(seq);
  } else {  // resume and recompute, when it fits
    const SeqId seq = pick(true);
    if (seq < 0) return;
    const std::int64_t length = model_[seq].preempted_length;
    if (!m_.can_grow(seq, length)) return;
    ASSERT_EQ(m_.resume(seq), length) << where();
    model_[seq] = {};
    ++cov_.resumes;
    grow(seq, length);
  }
}

void Harness::grow(SeqId seq, std::int64_t n) {
  const std::int64_t used_before = m_.usage().n_used;
  ModelSeq& s = model_[seq];
  const auto start = static_cast<std::int64_t>(s.tags.size());
  if (!m_.can_grow(seq, n)) {
    ++cov_.failed_grows;
    EXPECT_THROW(m_.grow(seq, n), CapacityError) << where();
    ASSERT_EQ(m_.usage().n_used, used_before) << where() << ": failed grow changed the pool";
    ASSERT_EQ(m_.n_tokens(seq), start) << where();
    return;
  }
  const std::int64_t held_from = m_.block_table(seq, 1).first_held();
  std::vector<BlockCopy> copies;
  m_.grow(seq, n, &copies);
  ++cov_.grows;
  cov_.copies += static_cast<std::int64_t>(copies.size());
  cov_.window_drops += m_.block_table(seq, 1).first_held() > held_from;
  for (const BlockCopy& c : copies) {
    const BlockTable& t = m_.block_table(seq, c.group);
    ASSERT_EQ(t.block(start / t.block_size()), c.dst) << where() << ": copy is not the old tail";
    ASSERT_GE(m_.pool(c.group).refcount(c.src), 1) << where() << ": copied a freed block";
  }
  s.keep_from = std::max(s.keep_from, start - kWindow + 1);
  s.tags.resize(static_cast<std::size_t>(start + n));
  write_tags(seq, start);
  check_cheap(seq);
}

// Truncation is refused (and changes nothing) when the window group has released a block
// the next query would need.
void Harness::truncate(SeqId seq, std::int64_t n) {
  const BlockTable& t = m_.block_table(seq, 1);
  const std::int64_t first_needed = std::max<std::int64_t>(0, n - kWindow + 1) / t.block_size();
  const std::int64_t used_before = m_.usage().n_used;
  ModelSeq& s = model_[seq];
  if (n > 0 && t.first_held() > first_needed) {
    ++cov_.refused_truncations;
    EXPECT_THROW(m_.truncate(seq, n), UsageError) << where();
    ASSERT_EQ(m_.usage().n_used, used_before) << where();
    return;
  }
  m_.truncate(seq, n);
  ++cov_.truncations;
  s.tags.resize(static_cast<std::size_t>(n));
  if (n == 0) s.keep_from = 0;
  check_cheap(seq);
}

void Harness::write_tags(SeqId seq, std::int64_t from) {
  std::vector<std::uint32_t>& tags = model_[seq].tags;
  for (auto pos = from; pos < static_cast<std::int64_t>(tags.size()); ++pos) {
    const std::uint32_t tag = next_tag_++;
    tags[static_cast<std::size_t>(pos)] = tag;
    for (std::int64_t g = 0; g < m_.n_groups(); ++g) {
      const KvSlot slot = m_.slot(seq, g, pos);
      ASSERT_EQ(m_.pool(g).refcount(slot.block), 1) << where() << ": grown slot in a shared block";
      std::uint8_t* base = m_.bytes().block_data(g, slot.block);
      std::memcpy(m_.layout(g).data(base, KvSide::K, 0, 0, slot.slot), &tag, sizeof tag);
    }
  }
}

std::uint32_t Harness::read_tag(SeqId seq, std::int64_t group, std::int64_t pos) const {
  const KvSlot slot = m_.slot(seq, group, pos);
  std::uint32_t tag = 0;
  const std::uint8_t* base = m_.bytes().block_data(group, slot.block);
  std::memcpy(&tag, m_.layout(group).data(base, KvSide::K, 0, 0, slot.slot), sizeof tag);
  return tag;
}

void Harness::check_cheap(SeqId seq) {
  for (std::int64_t g = 0; g < m_.n_groups(); ++g) {
    const BlockPool& pool = m_.pool(g);
    ASSERT_EQ(pool.n_free() + pool.n_used(), pool.n_blocks()) << where();
    const BlockTable& t = m_.block_table(seq, g);
    ASSERT_EQ(t.n_tokens(), static_cast<std::int64_t>(model_[seq].tags.size())) << where();
    ASSERT_GE(t.capacity(), t.n_tokens()) << where();
    ASSERT_LT(t.capacity() - t.n_tokens(), t.block_size()) << where();
  }
  ASSERT_EQ(m_.is_preempted(seq), model_[seq].preempted) << where();
}

void Harness::check_table(SeqId seq, std::int64_t g, std::vector<std::int32_t>& refs) {
  const BlockTable& t = m_.block_table(seq, g);
  const ModelSeq& s = model_[seq];
  const std::int64_t bs = t.block_size();
  ASSERT_EQ(t.n_blocks(), (t.n_tokens() + bs - 1) / bs) << where() << " seq " << seq;
  const std::int64_t window = m_.config().groups[static_cast<std::size_t>(g)].window;
  const std::int64_t expect_first = window > 0 && s.keep_from > 0 ? s.keep_from / bs : 0;
  ASSERT_EQ(t.first_held(), expect_first) << where() << " seq " << seq << " group " << g;
  std::vector<BlockId> seen;
  for (std::int64_t i = 0; i < t.n_blocks(); ++i) {
    const BlockId b = t.block(i);
    if (i < t.first_held()) {
      ASSERT_EQ(b, kNoBlock) << where();
      continue;
    }
    ASSERT_TRUE(b >= 0 && b < m_.pool(g).n_blocks()) << where() << " block " << b;
    ASSERT_EQ(std::count(seen.begin(), seen.end(), b), 0) << where() << " block twice in a table";
    seen.push_back(b);
    ++refs[static_cast<std::size_t>(b)];
  }
  for (std::int64_t pos = t.first_held() * bs; pos < t.n_tokens(); ++pos) {
    ASSERT_EQ(read_tag(seq, g, pos), s.tags[static_cast<std::size_t>(pos)])
        << where() << " seq " << seq << " group " << g << " pos " << pos;
  }
}

void Harness::check_full() {
  ASSERT_EQ(m_.sequence_ids().size(), model_.size()) << where();
  std::int64_t shared_savings = 0;
  for (std::int64_t g = 0; g < m_.n_groups(); ++g) {
    const BlockPool& pool = m_.pool(g);
    std::vector<std::int32_t> refs(static_cast<std::size_t>(pool.n_blocks()), 0);
    for (const auto& entry : model_) {
      ASSERT_NO_FATAL_FAILURE(check_cheap(entry.first));
      ASSERT_NO_FATAL_FAILURE(check_table(entry.first, g, refs));
    }
    ASSERT_EQ(pool.free_queue().size(), pool.n_free()) << where();
    ASSERT_EQ(static_cast<std::int64_t>(pool.free_queue().to_vector().size()), pool.n_free());
    for (BlockId b = 0; b < pool.n_blocks(); ++b) {
      const std::int32_t rc = pool.refcount(b);
      ASSERT_EQ(rc, refs[static_cast<std::size_t>(b)])
          << where() << " group " << g << " block " << b;
      ASSERT_EQ(pool.free_queue().contains(b), rc == 0) << where() << " block " << b;
      if (rc > 1) shared_savings += (rc - 1) * m_.layout(g).block_bytes();
    }
  }
  const CacheSnapshot snap = snapshot_of(m_);
  ASSERT_EQ(snap.n_used, m_.usage().n_used) << where();
  ASSERT_EQ(snap.shared_savings_bytes, shared_savings) << where();
}

TEST(KvCacheProperty, RandomSchedulerOperationsKeepEveryInvariant) {
  constexpr std::uint64_t kSeed = 20240611;
  Harness h(kSeed);
  for (std::int64_t op = 0; op < kOps; ++op) {
    h.step(op);
    if (op % kFullCheckEvery == kFullCheckEvery - 1) h.check_full();
    if (::testing::Test::HasFailure()) {
      FAIL() << "stopped at op " << op << " (seed " << kSeed << ")";
    }
  }
  h.check_full();
  const Coverage& c = h.coverage();
  std::printf(
      "grows %lld (failed %lld), copies %lld, window drops %lld, forks %lld, truncations %lld "
      "(refused %lld), frees %lld, preempts %lld, resumes %lld\n",
      static_cast<long long>(c.grows), static_cast<long long>(c.failed_grows),
      static_cast<long long>(c.copies), static_cast<long long>(c.window_drops),
      static_cast<long long>(c.forks), static_cast<long long>(c.truncations),
      static_cast<long long>(c.refused_truncations), static_cast<long long>(c.frees),
      static_cast<long long>(c.preempts), static_cast<long long>(c.resumes));
  const std::int64_t floor = kOps / 1000;  // every case at least 0.1% of the operations
  EXPECT_GT(c.failed_grows, floor);
  EXPECT_GT(c.copies, floor);
  EXPECT_GT(c.window_drops, floor);
  EXPECT_GT(c.resumes, floor);
  EXPECT_GT(c.forks, floor);
  EXPECT_GT(c.truncations, floor);
  EXPECT_GT(c.refused_truncations, floor);
}

}  // namespace
}  // namespace kvscope
