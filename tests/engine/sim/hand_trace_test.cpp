// The simulator against traces worked out by hand: every frame of every policy, the
// summaries, and block maps at chosen steps. The arithmetic is in the comments; a step
// is: release last step's finished, arrivals, decode (oldest admission first), admission
// (FCFS), frame (policy_simulation.h).
#include <gtest/gtest.h>

#include <vector>

#include "sim/policy_simulation.h"
#include "sim/simulation.h"

namespace kvscope {
namespace {

// The figures of one frame a test spells out.
struct Expected {
  std::int64_t stored, reserved, internal, external, free;
  std::int64_t running, waiting, admitted, finished, preemptions, recomputed;
};

void expect_frames(const PolicyRun& run, const std::vector<Expected>& want) {
  ASSERT_EQ(run.frames.size(), want.size()) << sim_policy_name(run.policy);
  for (std::size_t i = 0; i < want.size(); ++i) {
    const SimFrame& f = run.frames[i];
    const Expected& e = want[i];
    SCOPED_TRACE(testing::Message() << sim_policy_name(run.policy) << " step " << i);
    EXPECT_EQ(f.step, static_cast<std::int64_t>(i));
    EXPECT_EQ(f.stored, e.stored);
    EXPECT_EQ(f.reserved, e.reserved);
    EXPECT_EQ(f.internal, e.internal);
    EXPECT_EQ(f.external, e.external);
    EXPECT_EQ(f.free, e.free);
    EXPECT_EQ(f.running, e.running);
    EXPECT_EQ(f.waiting, e.waiting);
    EXPECT_EQ(f.admitted, e.admitted);
    EXPECT_EQ(f.finished, e.finished);
    EXPECT_EQ(f.preemptions, e.preemptions);
    EXPECT_EQ(f.recomputed, e.recomputed);
  }
}

// Capacity 32 slots, paged blocks of 4 (8 blocks), max context 16.
//   r0 arrives at 0: prompt 5, output 2 (length 7)
//   r1 arrives at 0: prompt 9, output 4 (length 13)
//   r2 arrives at 1: prompt 10, output 4 (length 14)
const SimConfig kConfig{32, 4, 16};
const std::vector<SimRequest> kTrace = {{0, 0, 5, 2}, {1, 0, 9, 4}, {2, 1, 10, 4}};

// Without preemption every policy stores the same tokens: each request holds prompt,
// prompt + 1, ..., prompt + output over its output + 1 steps:
//   r0 5+6+7 = 18, r1 9+..+13 = 55, r2 10+..+14 = 60: 133 stored slot-steps;
//   and its reserved slots (length - stored) 2+1+0 + 4+3+2+1+0 + 4+3+2+1+0 = 23.

TEST(SimHandTrace, ReserveMaxGivesEachSequenceSixteenSlots) {
  // Two reservations fill the 32 slots: r0 [0,16), r1 [16,32); r2 waits until r0 is gone.
  // internal = 16 - length: r0 9, r1 3, r2 2.
  // step 0: r0 5, r1 9 stored; reserved 2 + 4; internal 9 + 3.
  // step 1: r2 arrives, no hole at all (external 0); r0 6, r1 10; reserved 1 + 3.
  // step 2: r0 7 (done), r1 11; reserved 0 + 2.
  // step 3: r0 released; r1 12; r2 admitted into [0,16) with 10; reserved 1 + 4, internal 3 + 2.
  // step 4: r1 13 (done), r2 11; reserved 0 + 3.
  // step 5: r1 released (free 16); r2 12, 6: 13, 7: 14 (done).
  const PolicyRun run = run_policy(SimPolicy::ReserveMax, kTrace, kConfig);
  expect_frames(run, {{14, 6, 12, 0, 0, 2, 0, 2, 0, 0, 0},
                      {16, 4, 12, 0, 0, 2, 1, 2, 0, 0, 0},
                      {18, 2, 12, 0, 0, 2, 1, 2, 1, 0, 0},
                      {22, 5, 5, 0, 0, 2, 0, 3, 1, 0, 0},
                      {24, 3, 5, 0, 0, 2, 0, 3, 2, 0, 0},
                      {12, 2, 2, 0, 16, 1, 0, 3, 2, 0, 0},
                      {13, 1, 2, 0, 16, 1, 0, 3, 2, 0, 0},
                      {14, 0, 2, 0, 16, 1, 0, 3, 3, 0, 0}});
  const SimSummary& s = run.summary;
  EXPECT_EQ(s.steps, 8);
  EXPECT_EQ(s.stored, 133);
  EXPECT_EQ(s.reserved, 23);
  EXPECT_EQ(s.internal, 12 + 12 + 12 + 5 + 5 + 2 + 2 + 2);  // 52
  EXPECT_EQ(s.external, 0);
  EXPECT_EQ(s.free, 48);
  EXPECT_DOUBLE_EQ(s.used_share(), 133.0 / 208.0);
  EXPECT_DOUBLE_EQ(s.internal_share(), 52.0 / 208.0);
  EXPECT_DOUBLE_EQ(s.mean_utilisation(), 133.0 / (8 * 32));
  EXPECT_EQ(s.peak_running, 2);
  EXPECT_DOUBLE_EQ(s.mean_running(), 13.0 / 8.0);
  EXPECT_DOUBLE_EQ(s.mean_wait(), 2.0 / 3.0);  // r2 arrived at 1, admitted at 3
}

TEST(SimHandTrace, ExactFitLeavesHolesTooSmallForTheWaitingRequest) {
  // r0 [0,7), r1 [7,20); r2 needs 14 contiguous slots.
  // step 0: stored 5 + 9, reserved 2 + 4, free 12 ([20,32)).
  // step 1: r2 waits: the only hole [20,32) holds 12 < 14: external 12. r0 6, r1 10.
  // step 2: r0 7 (done), r1 11; still external 12.
  // step 3: r0 released: holes [0,7) and [20,32) hold 19 >= 14 free slots, but neither
  //         holds 14: external 7 + 12 = 19. r1 12.
  // step 4: r1 13 (done), external 19.
  // step 5: r1 released, r2 admitted at [0,14) with 10 stored, 4 reserved, 18 free.
  // steps 6-9: r2 11, 12, 13, 14 (done at 9 = 5 + output 4).
  const PolicyRun run = run_policy(SimPolicy::ExactFit, kTrace, kConfig);
  expect_frames(run, {{14, 6, 0, 0, 12, 2, 0, 2, 0, 0, 0},
                      {16, 4, 0, 12, 0, 2, 1, 2, 0, 0, 0},
                      {18, 2, 0, 12, 0, 2, 1, 2, 1, 0, 0},
                      {12, 1, 0, 19, 0, 1, 1, 2, 1, 0, 0},
                      {13, 0, 0, 19, 0, 1, 1, 2, 2, 0, 0},
                      {10, 4, 0, 0, 18, 1, 0, 3, 2, 0, 0},
                      {11, 3, 0, 0, 18, 1, 0, 3, 2, 0, 0},
                      {12, 2, 0, 0, 18, 1, 0, 3, 2, 0, 0},
                      {13, 1, 0, 0, 18, 1, 0, 3, 2, 0, 0},
                      {14, 0, 0, 0, 18, 1, 0, 3, 3, 0, 0}});
  const SimSummary& s = run.summary;
  EXPECT_EQ(s.steps, 10);
  EXPECT_EQ(s.stored, 133);
  EXPECT_EQ(s.reserved, 23);
  EXPECT_EQ(s.external, 12 + 12 + 19 + 19);  // 62
  EXPECT_EQ(s.free, 12 + 5 * 18);            // 102
  EXPECT_DOUBLE_EQ(s.used_share(), 133.0 / 218.0);
  EXPECT_DOUBLE_EQ(s.external_share(), 62.0 / 218.0);
  EXPECT_DOUBLE_EQ(s.mean_wait(), 4.0 / 3.0);  // r2: arrived 1, admitted 5
}

TEST(SimHandTrace, ExactFitMapShowsTheHolesAsExternal) {
  PolicySimulation sim(SimPolicy::ExactFit, kTrace, kConfig);
  for (int i = 0; i < 4; ++i) sim.step();  // through step 3
  const SimBlockMap map = sim.block_map();
  EXPECT_FALSE(map.paged);
  EXPECT_EQ(map.capacity, 32);
  EXPECT_EQ(map.head_need, 14);
  ASSERT_EQ(map.spans.size(), 1u);
  EXPECT_EQ(map.spans[0].start, 7);
  EXPECT_EQ(map.spans[0].size, 13);
  EXPECT_EQ(map.spans[0].owner, 1);
  EXPECT_EQ(map.spans[0].stored, 12);
  EXPECT_EQ(map.spans[0].needed, 13);
  const std::vector<SimHole> holes = sim_holes(map);
  ASSERT_EQ(holes.size(), 2u);
  EXPECT_EQ(holes[0].start, 0);
  EXPECT_EQ(holes[0].size, 7);
  EXPECT_TRUE(holes[0].external);
  EXPECT_EQ(holes[1].start, 20);
  EXPECT_EQ(holes[1].size, 12);
  EXPECT_TRUE(holes[1].external);
}

TEST(SimHandTrace, PagedTakesBlocksAsSequencesGrow) {
  // 8 blocks of 4, handed out from the pool's FIFO free queue.
  // step 0: r0 5 tokens -> blocks 0,1; r1 9 -> 2,3,4. 20 slots held, 14 stored.
  // step 1: r0 6, r1 10 (no new blocks); r2 arrives, 10 tokens -> 5,6,7: all 32 held,
  //         26 stored, internal 6.
  // step 2: r0 7 (done), r1 11, r2 11: stored 29, internal 3.
  // step 3: r0 released (blocks 0,1 to the back of the queue); r1 12, r2 12: 6 blocks,
  //         24 stored, internal 0, free 8.
  // step 4: r1 13 (done) takes block 0, r2 13 takes block 1: 26 stored, internal 6.
  // step 5: r1 released; r2 14 (done): 4 blocks, internal 2, free 16.
  const PolicyRun run = run_policy(SimPolicy::Paged, kTrace, kConfig);
  expect_frames(run, {{14, 0, 6, 0, 12, 2, 0, 2, 0, 0, 0},
                      {26, 0, 6, 0, 0, 3, 0, 3, 0, 0, 0},
                      {29, 0, 3, 0, 0, 3, 0, 3, 1, 0, 0},
                      {24, 0, 0, 0, 8, 2, 0, 3, 1, 0, 0},
                      {26, 0, 6, 0, 0, 2, 0, 3, 2, 0, 0},
                      {14, 0, 2, 0, 16, 1, 0, 3, 3, 0, 0}});
  const SimSummary& s = run.summary;
  EXPECT_EQ(s.stored, 133);
  EXPECT_EQ(s.internal, 23);
  EXPECT_DOUBLE_EQ(s.used_share(), 133.0 / 156.0);
  EXPECT_EQ(s.peak_running, 3);
  EXPECT_DOUBLE_EQ(s.mean_wait(), 0.0);
}

TEST(SimHandTrace, PagedMapFollowsTheManagersBlockTables) {
  PolicySimulation sim(SimPolicy::Paged, kTrace, kConfig);
  for (int i = 0; i < 5; ++i) sim.step();  // through step 4
  const SimBlockMap map = sim.block_map();
  EXPECT_TRUE(map.paged);
  EXPECT_EQ(map.unit, 4);
  EXPECT_EQ(map.usable, 32);
  EXPECT_EQ(map.head_need, 0);
  // r1 holds blocks 2,3,4 then 0 (1 token); r2 holds 5,6,7 then 1 (1 token).
  const std::vector<std::pair<std::int64_t, std::int64_t>> owner_filled = {
      {1, 1}, {2, 1}, {1, 4}, {1, 4}, {1, 4}, {2, 4}, {2, 4}, {2, 4}};
  ASSERT_EQ(map.spans.size(), owner_filled.size());
  for (std::size_t b = 0; b < owner_filled.size(); ++b) {
    EXPECT_EQ(map.spans[b].start, static_cast<std::int64_t>(4 * b));
    EXPECT_EQ(map.spans[b].size, 4);
    EXPECT_EQ(map.spans[b].owner, owner_filled[b].first) << "block " << b;
    EXPECT_EQ(map.spans[b].stored, owner_filled[b].second) << "block " << b;
  }
  EXPECT_TRUE(sim_holes(map).empty());
}

// Capacity 16 (4 blocks of 4), max context 12.
//   r0 arrives at 0: prompt 6, output 3;  r1 arrives at 0: prompt 8, output 2.
TEST(SimHandTrace, PagedStallsTheNewestAndPreemptsItForAnOlderSequence) {
  // step 0: r0 6 -> blocks 0,1 (2 empty slots); r1 8 -> blocks 2,3. Pool full.
  // step 1: r0 7 fits its tail. r1 needs a block, none is free and nobody is newer: it
  //         skips the step. stored 15, internal 1.
  // step 2: r0 8; r1 skips again. stored 16, internal 0.
  // step 3: r0 needs a block: r1 is preempted (blocks 2,3 back), r0 takes block 2 and
  //         stores its 9th token (done). r1 (8 tokens, 2 blocks) does not fit the 1 free
  //         block: it waits. stored 9, 3 blocks held, internal 3, free 4.
  // step 4: r0 released; r1 admitted again, recomputing its 8 tokens into blocks 3 and 0.
  // step 5: r1 9 takes block 1. step 6: r1 10 (done).
  const SimConfig config{16, 4, 12};
  const std::vector<SimRequest> trace = {{0, 0, 6, 3}, {1, 0, 8, 2}};
  const PolicyRun run = run_policy(SimPolicy::Paged, trace, config);
  expect_frames(run, {{14, 0, 2, 0, 0, 2, 0, 2, 0, 0, 0},
                      {15, 0, 1, 0, 0, 2, 0, 2, 0, 0, 0},
                      {16, 0, 0, 0, 0, 2, 0, 2, 0, 0, 0},
                      {9, 0, 3, 0, 4, 1, 1, 2, 1, 1, 0},
                      {8, 0, 0, 0, 8, 1, 0, 2, 1, 1, 8},
                      {9, 0, 3, 0, 4, 1, 0, 2, 1, 1, 8},
                      {10, 0, 2, 0, 4, 1, 0, 2, 2, 1, 8}});
  const SimSummary& s = run.summary;
  EXPECT_EQ(s.stored, 81);
  EXPECT_EQ(s.internal, 11);
  EXPECT_EQ(s.free, 20);
  EXPECT_EQ(s.preemptions, 1);
  EXPECT_EQ(s.recomputed, 8);
  EXPECT_DOUBLE_EQ(s.used_share(), 81.0 / 92.0);

  PolicySimulation sim(SimPolicy::Paged, trace, config);
  for (int i = 0; i < 5; ++i) sim.step();  // through step 4
  const SimBlockMap map = sim.block_map();
  ASSERT_EQ(map.spans.size(), 2u);
  EXPECT_EQ(map.spans[0].start, 0);   // block 0: r1's second block
  EXPECT_EQ(map.spans[1].start, 12);  // block 3: r1's first block
  EXPECT_EQ(map.spans[0].owner, 1);
  EXPECT_EQ(map.spans[1].owner, 1);
}

TEST(SimHandTrace, ExternalCountsTheSlotsNoBlockCovers) {
  // Capacity 10, blocks of 4: 2 blocks (8 slots); 2 slots no block covers. r0 takes both
  // blocks; while r1 waits the 2 leftover slots are external, otherwise free.
  const SimConfig config{10, 4, 8};
  const std::vector<SimRequest> trace = {{0, 0, 7, 1}, {1, 0, 2, 1}};
  const PolicyRun run = run_policy(SimPolicy::Paged, trace, config);
  // step 0: r0 7 tokens in 2 blocks (internal 1); r1 needs 1 block: waits, external 2.
  // step 1: r0 8 (done); r1 still waits. step 2: r0 released, r1 admitted (2 tokens, 1
  // block, internal 2). step 3: r1 3 (done).
  expect_frames(run, {{7, 0, 1, 2, 0, 1, 1, 1, 0, 0, 0},
                      {8, 0, 0, 2, 0, 1, 1, 1, 1, 0, 0},
                      {2, 0, 2, 0, 6, 1, 0, 2, 1, 0, 0},
                      {3, 0, 1, 0, 6, 1, 0, 2, 2, 0, 0}});
}

}  // namespace
}  // namespace kvscope
