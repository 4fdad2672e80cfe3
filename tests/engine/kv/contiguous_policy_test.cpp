#include "kv/contiguous_policy.h"

#include <vector>

#include <gtest/gtest.h>

#include "util/error.h"

namespace kvscope {
namespace {

TEST(ContiguousPolicy, ReservesMaxContextPerSequenceAndWastesTheRest) {
  const ContiguousPolicy p(100, {{0, 10}});  // 10 bytes per token
  const std::vector<std::int64_t> lengths = {30, 100, 0};
  const ContiguousCost c = p.cost(lengths);
  EXPECT_EQ(c.reserved_slots, 300);
  EXPECT_EQ(c.used_slots, 130);
  EXPECT_EQ(c.wasted_slots, 170);
  EXPECT_EQ(c.reserved_bytes, 3000);
  EXPECT_EQ(c.used_bytes, 1300);
  EXPECT_EQ(c.wasted_bytes, 1700);
}

TEST(ContiguousPolicy, SlidingWindowGroupsReserveOnlyTheWindow) {
  const ContiguousPolicy p(100, {{0, 10}, {16, 4}, {500, 1}});
  EXPECT_EQ(p.slots_per_sequence(0), 100);
  EXPECT_EQ(p.slots_per_sequence(1), 16);
  EXPECT_EQ(p.slots_per_sequence(2), 100);  // window past the context
  EXPECT_EQ(p.bytes_per_sequence(), 100 * 10 + 16 * 4 + 100 * 1);
  const std::vector<std::int64_t> lengths = {40};
  const ContiguousCost w = p.group_cost(1, lengths);
  EXPECT_EQ(w.reserved_slots, 16);
  EXPECT_EQ(w.used_slots, 16);
  EXPECT_EQ(w.wasted_slots, 0);
  EXPECT_EQ(p.cost(lengths).reserved_slots, 100 + 16 + 100);
}

TEST(ContiguousPolicy, MaxSequencesIsTheBudgetOverPerSequenceBytes) {
  const ContiguousPolicy p(2048, {{0, 16384 * 32}});  // Llama-2-7B fp16
  EXPECT_EQ(p.bytes_per_sequence(), std::int64_t{1} << 30);
  EXPECT_EQ(p.max_sequences(std::int64_t{10} << 30), 10);
  EXPECT_EQ(p.max_sequences((std::int64_t{1} << 30) - 1), 0);
}

TEST(ContiguousPolicy, ForConfigUsesTheSameBytesFunctionAsThePool) {
  KvCacheConfig c;
  c.groups = {{{0, 2}, KvDtype::F16, KvDtype::F16, 0}, {{1}, KvDtype::Int8, KvDtype::Int4, 8}};
  c.n_kv_heads = 4;
  c.head_dim = 8;
  c.max_context = 64;
  const ContiguousPolicy p = ContiguousPolicy::for_config(c);
  EXPECT_EQ(p.bytes_per_sequence(),
            64 * 2 * kv_slot_bytes_per_layer(KvDtype::F16, KvDtype::F16, 4, 8) +
                8 * kv_slot_bytes_per_layer(KvDtype::Int8, KvDtype::Int4, 4, 8));
  EXPECT_EQ(p.bytes_per_sequence(), 64 * 2 * 128 + 8 * 4 * (10 + 6));
}

TEST(ContiguousPolicy, Int4KeysAlsoReserveTheOffsetsOfEveryBlockOfSlots) {
  KvCacheConfig c;
  c.groups = {{{0, 1}, KvDtype::Int4, KvDtype::Int4, 0}};
  c.n_kv_heads = 4;
  c.head_dim = 8;
  c.block_size = 16;
  c.max_context = 40;  // 3 runs of 16 slots
  const ContiguousPolicy p = ContiguousPolicy::for_config(c);
  const std::int64_t slot = 2 * 4 * 18, offsets = 2 * 4 * 8 * 2;  // both layers
  EXPECT_EQ(p.bytes_per_sequence(), 40 * slot + 3 * offsets);
  const std::vector<std::int64_t> lengths = {17, 40};
  const ContiguousCost cost = p.cost(lengths);
  EXPECT_EQ(cost.reserved_bytes, 2 * (40 * slot + 3 * offsets));
  EXPECT_EQ(cost.used_bytes, 17 * slot + 2 * offsets + 40 * slot + 3 * offsets);
  EXPECT_EQ(cost.wasted_bytes, 23 * slot + offsets);
  EXPECT_EQ(cost.wasted_slots, 23);
}

TEST(ContiguousPolicy, RejectsInvalidShapes) {
  EXPECT_THROW(ContiguousPolicy(0, {{0, 1}}), UsageError);
  EXPECT_THROW(ContiguousPolicy(10, {{-1, 1}}), UsageError);
  EXPECT_THROW(ContiguousPolicy(10, {{0, 0}}), UsageError);
  EXPECT_THROW(ContiguousPolicy(10, {{0, 1, -1, 16}}), UsageError);
  EXPECT_THROW(ContiguousPolicy(10, {{0, 1, 8, 0}}), UsageError);
}

}  // namespace
}  // namespace kvscope
