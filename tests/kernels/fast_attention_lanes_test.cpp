// The fast attention kernel's lane roles on the host (fast_attention_tile.h), for every
// instantiated (K dtype, V dtype, heads per CTA, head_dim): a warp of 32 host threads runs the
// kernel's own team_reduce_scatter and combine_over, exchanging through a barrier what
// __shfl_xor_sync exchanges, on values that record which lane's partial score of which
// (head, key) they hold. Then every lane holds exactly the scores LaneRole says, each (head,
// key) score has exactly one owner per team, each head one writer, and a head's max and sum
// run over exactly the lanes that hold that head's keys.
#include "attention/fast_attention_tile.h"

#include <barrier>
#include <bitset>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kvscope {
namespace {

using cuda::LaneRole;
namespace qd = cuda::qd;

constexpr int kLanes = qd::kLanes;
constexpr int kMaxN = 32;  // scores a lane before the reduction: U x G is at most 32

// A partial score as the set of (lane, score index) terms summed into it; a term added twice
// marks it `twice` (a double count the float sum would hide).
struct Terms {
  std::bitset<kLanes * kMaxN> bits;
  bool twice = false;
  Terms operator+(const Terms& o) const {
    Terms t;
    t.bits = bits | o.bits;
    t.twice = twice || o.twice || (bits & o.bits).any();
    return t;
  }
  static Terms of(int lane, int n) {
    Terms t;
    t.bits.set(static_cast<std::size_t>(lane * kMaxN + n));
    return t;
  }
};

// Runs body(lane, xor_lane) on 32 threads in lockstep: xor_lane(x, o) returns the x that lane
// ^ o passed in the same call, as __shfl_xor_sync does for a full warp.
template <class V>
void run_warp(const std::function<void(int, const std::function<V(V, int)>&)>& body) {
  std::vector<V> slots(kLanes);
  std::barrier sync(kLanes);
  std::vector<std::thread> lanes;
  for (int lane = 0; lane < kLanes; ++lane) {
    lanes.emplace_back([&, lane] {
      const std::function<V(V, int)> xor_lane = [&](V x, int o) {
        slots[static_cast<std::size_t>(lane)] = x;
        sync.arrive_and_wait();
        const V got = slots[static_cast<std::size_t>(lane ^ o)];
        sync.arrive_and_wait();
        return got;
      };
      body(lane, xor_lane);
    });
  }
  for (std::thread& t : lanes) t.join();
}

template <class T>
std::string shape_name() {
  return "K " + std::string(kv_dtype_name(T::KD)) + " V " + std::string(kv_dtype_name(T::VD)) +
         " G " + std::to_string(T::G) + " head_dim " + std::to_string(T::HD) + " (P " +
         std::to_string(T::P) + ", U " + std::to_string(T::U) + ")";
}

template <class T>
void check_tile() {
  static_assert(T::N <= kMaxN);
  const std::string what = shape_name<T>();
  // the reduce-scatter: lane holds d[n] = its own partial of score n
  std::vector<std::vector<Terms>> held(kLanes);
  run_warp<Terms>([&](int lane, const std::function<Terms(Terms, int)>& xor_lane) {
    Terms d[T::N];
    for (int n = 0; n < T::N; ++n) d[n] = Terms::of(lane, n);
    const LaneRole<T> r(lane);
    cuda::team_reduce_scatter<T::P / 2, T::N>(d, r.c, xor_lane);
    held[static_cast<std::size_t>(lane)].assign(d, d + T::VPL);
  });
  // owners[s][h][u]: owners in team s of score (h, u); writers[h]
  std::vector<int> owners(static_cast<std::size_t>(T::KPW * T::N), 0), writers(T::G, 0);
  int active = 0;
  for (int lane = 0; lane < kLanes; ++lane) {
    const LaneRole<T> r(lane);
    active += r.s == 0 && r.active ? 1 : 0;
    ASSERT_LT(r.hl, T::G) << what;
    for (int i = 0; i < T::VPL; ++i) {
      const Terms& got = held[static_cast<std::size_t>(lane)][static_cast<std::size_t>(i)];
      Terms want;
      for (int c = 0; c < T::P; ++c) want = want + Terms::of(r.s * T::P + c, r.n0 + i);
      EXPECT_FALSE(got.twice) << what << ": lane " << lane << " counted a term twice";
      EXPECT_EQ(got.bits, want.bits)
          << what << ": lane " << lane << " value " << i << " is not the team's score " << r.n0 + i
          << " (head " << r.hl << ", key " << r.u0 + i << ")";
      if (r.owner) ++owners[static_cast<std::size_t>(r.s * T::N + r.n0 + i)];
    }
    if (r.writer) ++writers[static_cast<std::size_t>(r.hl)];
  }
  for (std::size_t k = 0; k < owners.size(); ++k) {
    EXPECT_EQ(owners[k], 1) << what << ": team " << k / T::N << ", head " << k % T::N / T::U
                            << ", key " << k % T::U;
  }
  for (int h = 0; h < T::G; ++h) EXPECT_EQ(writers[static_cast<std::size_t>(h)], 1) << what;
  EXPECT_EQ(active * 8, T::HD) << what << ": team 0's active lanes write each element once";

  // a head's max / sum: the lanes it combines hold that head's keys, each (team, key) once
  // among the owners (whose shares of l the writer ends with)
  using LaneSet = std::bitset<kLanes>;
  std::vector<LaneSet> reached(kLanes);
  run_warp<LaneSet>([&](int lane, const std::function<LaneSet(LaneSet, int)>& xor_lane) {
    LaneSet mine;
    mine.set(static_cast<std::size_t>(lane));
    reached[static_cast<std::size_t>(lane)] =
        cuda::combine_over<T::kShiftT, T::kUBits, cuda::ilog2(T::P)>(
            mine, xor_lane, [](LaneSet a, LaneSet b) { return a | b; });
  });
  for (int lane = 0; lane < kLanes; ++lane) {
    const LaneRole<T> r(lane);
    std::vector<int> keys(static_cast<std::size_t>(T::KPW * T::U), 0);
    for (int other = 0; other < kLanes; ++other) {
      if (!reached[static_cast<std::size_t>(lane)][static_cast<std::size_t>(other)]) continue;
      const LaneRole<T> o(other);
      EXPECT_EQ(o.hl, r.hl) << what << ": lane " << lane << " combines lane " << other
                            << " of another head";
      EXPECT_EQ(o.owner, r.owner) << what << ": owners and copies are combined apart";
      for (int i = 0; i < T::VPL; ++i) ++keys[static_cast<std::size_t>(o.s * T::U + o.u0 + i)];
    }
    for (const int k : keys) EXPECT_EQ(k, 1) << what << ": lane " << lane;
  }
}

template <KvDtype KD, KvDtype VD, int G>
void check_head_dims() {
  check_tile<cuda::FastShape<KD, VD, G, 64>>();
  check_tile<cuda::FastShape<KD, VD, G, 96>>();
  check_tile<cuda::FastShape<KD, VD, G, 128>>();
  check_tile<cuda::FastShape<KD, VD, G, 256>>();
}

template <KvDtype KD, KvDtype VD>
void check_tiles() {
  check_head_dims<KD, VD, 1>();
  check_head_dims<KD, VD, 2>();
  check_head_dims<KD, VD, 4>();
  check_head_dims<KD, VD, 8>();
}

template <KvDtype KD>
void check_v_dtypes() {
  check_tiles<KD, KvDtype::F16>();
  check_tiles<KD, KvDtype::Int8>();
  check_tiles<KD, KvDtype::Int4>();
}

TEST(FastAttentionLanes, EveryInstantiationGivesEachScoreOneOwnerAndEachHeadOneWriter) {
  // the launch dispatches exactly these tiles and head dims (paged_attention_fast.cuh)
  EXPECT_EQ(std::vector<int>(std::begin(cuda::kFastTiles), std::end(cuda::kFastTiles)),
            (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(std::vector<int>(std::begin(cuda::kFastHeadDims), std::end(cuda::kFastHeadDims)),
            (std::vector<int>{64, 96, 128, 256}));
  check_v_dtypes<KvDtype::F16>();
  check_v_dtypes<KvDtype::Int8>();
  check_v_dtypes<KvDtype::Int4>();
}

// The check itself catches a wrong role: the reduction's result for a shape whose lanes are
// told a different team index than the one they reduced with.
TEST(FastAttentionLanes, ARoleThatDisagreesWithTheReductionIsCaught) {
  using T = cuda::FastShape<KvDtype::F16, KvDtype::F16, 4, 128>;
  std::vector<Terms> first(kLanes);
  run_warp<Terms>([&](int lane, const std::function<Terms(Terms, int)>& xor_lane) {
    Terms d[T::N];
    for (int n = 0; n < T::N; ++n) d[n] = Terms::of(lane, n);
    cuda::team_reduce_scatter<T::P / 2, T::N>(d, (lane % T::P) ^ 1, xor_lane);  // wrong c
    first[static_cast<std::size_t>(lane)] = d[0];
  });
  int wrong = 0;
  for (int lane = 0; lane < kLanes; ++lane) {
    const LaneRole<T> r(lane);
    Terms want;
    for (int c = 0; c < T::P; ++c) want = want + Terms::of(r.s * T::P + c, r.n0);
    wrong += first[static_cast<std::size_t>(lane)].bits != want.bits ? 1 : 0;
  }
  EXPECT_GT(wrong, 0);
}

}  // namespace
}  // namespace kvscope
