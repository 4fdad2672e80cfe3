// First-fit placement in a linear slot space: the lowest hole that holds a reservation
// whole, holes that merge when their neighbours are released, and a refusal when no
// single hole is large enough although enough slots are free.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "sim/contiguous_arena.h"

namespace kvscope {
namespace {

std::vector<std::pair<std::int64_t, std::int64_t>> runs(
    const std::vector<ContiguousArena::Run>& rs) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& r : rs) out.emplace_back(r.start, r.size);
  return out;
}

TEST(ContiguousArena, PlacesFirstFitAndMergesReleasedNeighbours) {
  ContiguousArena a(100);
  EXPECT_EQ(a.allocate(30), 0);
  EXPECT_EQ(a.allocate(20), 30);
  EXPECT_EQ(a.allocate(40), 50);
  EXPECT_EQ(a.free_slots(), 10);
  a.release(0);   // hole [0, 30)
  a.release(50);  // hole [50, 100)
  using V = std::vector<std::pair<std::int64_t, std::int64_t>>;
  EXPECT_EQ(runs(a.holes()), (V{{0, 30}, {50, 50}}));
  EXPECT_EQ(a.allocate(25), 0);   // the first hole that fits, not the best
  EXPECT_EQ(a.allocate(10), 50);  // [25, 30) is too small
  a.release(30);                  // [25, 50) merges into one hole of 25
  EXPECT_EQ(runs(a.holes()), (V{{25, 25}, {60, 40}}));
  EXPECT_EQ(runs(a.reservations()), (V{{0, 25}, {50, 10}}));
}

TEST(ContiguousArena, RefusesWhenNoSingleHoleHoldsTheRequest) {
  ContiguousArena a(30);
  ASSERT_EQ(a.allocate(10), 0);
  ASSERT_EQ(a.allocate(10), 10);
  ASSERT_EQ(a.allocate(10), 20);
  a.release(0);
  a.release(20);
  EXPECT_EQ(a.free_slots(), 20);
  EXPECT_EQ(a.allocate(11), std::nullopt);  // 20 free, in two holes of 10
  EXPECT_EQ(a.used_slots(), 10);
  EXPECT_EQ(a.allocate(10), 0);
}

TEST(ContiguousArena, ExactFitAtTheEndAndMisuseIsALogicError) {
  ContiguousArena a(8);
  EXPECT_EQ(a.allocate(8), 0);
  EXPECT_EQ(a.allocate(1), std::nullopt);
  EXPECT_THROW(a.release(3), std::logic_error);
  EXPECT_THROW(a.allocate(0), std::logic_error);
  a.release(0);
  EXPECT_TRUE(a.reservations().empty());
}

}  // namespace
}  // namespace kvscope
