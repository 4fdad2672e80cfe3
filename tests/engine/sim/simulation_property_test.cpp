// Properties of whole runs on the preset traces: the five slot states always add up to the
// capacity, the maps agree with the frames, every request is served, the paged cache keeps
// more of its memory busy, and the figures agree with the engine's own KV classes.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kv/contiguous_policy.h"
#include "kv/kv_cache_observer.h"
#include "sim/paged_allocator.h"
#include "sim/policy_simulation.h"
#include "sim/simulation.h"
#include "sim/trace/trace_presets.h"
#include "util/error.h"

namespace kvscope {
namespace {

// A preset trace, shortened so the three presets run in well under a second.
std::vector<SimRequest> preset_trace(const std::string& name, std::int64_t n, std::uint64_t seed) {
  TraceSpec spec = find_trace_preset(name).spec;
  spec.n_requests = n;
  spec.seed = seed;
  return generate_trace(spec);
}

SimConfig preset_config(const std::string& name, std::int64_t block_size) {
  const TracePreset& p = find_trace_preset(name);
  return {p.capacity, block_size, p.spec.max_context};
}

const std::vector<std::string> kPresets = {"chat", "api-burst", "long-documents"};

TEST(SimulationProperties, SlotStatesAddUpToTheCapacityInEveryFrame) {
  for (const std::string& name : kPresets) {
    const SimConfig config = preset_config(name, 16);
    const SimulationResult r = run_simulation(preset_trace(name, 60, 3), config);
    ASSERT_EQ(r.runs.size(), 3u);
    for (const PolicyRun& run : r.runs) {
      SCOPED_TRACE(name + " " + std::string(sim_policy_name(run.policy)));
      for (const SimFrame& f : run.frames) {
        ASSERT_GE(f.stored, 0);
        ASSERT_GE(f.reserved, 0);
        ASSERT_GE(f.internal, 0);
        ASSERT_GE(f.external, 0);
        ASSERT_GE(f.free, 0);
        ASSERT_EQ(f.taken() + f.free, config.capacity) << "step " << f.step;
        if (f.external > 0) {
          ASSERT_GT(f.waiting, 0) << "external only while a request waits, step " << f.step;
        }
      }
      EXPECT_EQ(run.summary.admitted, 60);
      EXPECT_EQ(run.summary.finished, 60);
      EXPECT_EQ(run.summary.steps, static_cast<std::int64_t>(run.frames.size()));
      EXPECT_NEAR(run.summary.used_share() + run.summary.reserved_share() +
                      run.summary.internal_share() + run.summary.external_share(),
                  1.0, 1e-12);
    }
  }
}

TEST(SimulationProperties, BlockMapsAgreeWithTheirFrames) {
  for (const SimPolicy policy : kSimPolicies) {
    SCOPED_TRACE(std::string(sim_policy_name(policy)));
    const SimConfig config = preset_config("api-burst", 16);
    PolicySimulation sim(policy, preset_trace("api-burst", 120, 5), config);
    while (!sim.done()) {
      const SimFrame& f = sim.step();
      const SimBlockMap map = sim.block_map();
      std::int64_t stored = 0, reserved = 0, internal = 0, held = 0, external = 0, free = 0;
      std::int64_t end = 0;
      for (const SimSpan& s : map.spans) {
        ASSERT_GE(s.start, end) << "spans overlap or are out of order";
        ASSERT_LE(s.stored, s.needed);
        ASSERT_LE(s.needed, s.size);
        end = s.start + s.size;
        stored += s.stored;
        reserved += s.needed - s.stored;
        internal += s.size - s.needed;
        held += s.size;
      }
      for (const SimHole& h : sim_holes(map)) (h.external ? external : free) += h.size;
      ASSERT_EQ(stored, f.stored) << "step " << f.step;
      ASSERT_EQ(reserved, f.reserved) << "step " << f.step;
      ASSERT_EQ(internal, f.internal) << "step " << f.step;
      ASSERT_EQ(external, f.external) << "step " << f.step;
      ASSERT_EQ(free, f.free) << "step " << f.step;
      ASSERT_EQ(held + external + free, config.capacity);
    }
  }
}

TEST(SimulationProperties, PagedKeepsTheLargestShareOfItsMemoryBusy) {
  for (const std::string& name : kPresets) {
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      for (const std::int64_t block_size : {1, 4, 16, 32}) {
        SCOPED_TRACE(name + " seed " + std::to_string(seed) + " block size " +
                     std::to_string(block_size));
        const SimulationResult r =
            run_simulation(preset_trace(name, 80, seed), preset_config(name, block_size));
        const double paged = r.run(SimPolicy::Paged).summary.used_share();
        EXPECT_GE(paged, r.run(SimPolicy::ExactFit).summary.used_share());
        EXPECT_GT(paged, r.run(SimPolicy::ReserveMax).summary.used_share());
      }
    }
  }
}

TEST(SimulationProperties, BlockSizeOneWastesNothing) {
  const SimConfig config = preset_config("chat", 1);
  const PolicyRun run = run_policy(SimPolicy::Paged, preset_trace("chat", 80, 1), config);
  for (const SimFrame& f : run.frames) {
    ASSERT_EQ(f.internal, 0) << "step " << f.step;
    ASSERT_EQ(f.reserved, 0) << "step " << f.step;
    ASSERT_EQ(f.external, 0) << "step " << f.step;
  }
  EXPECT_DOUBLE_EQ(run.summary.used_share(), 1.0);
}

TEST(SimulationProperties, ContiguousPoliciesStoreTheSameTokensWhateverTheTiming) {
  // Neither preempts, so every request holds prompt .. prompt + output over output + 1
  // steps, whenever it is admitted.
  const std::vector<SimRequest> trace = preset_trace("chat", 80, 4);
  const SimulationResult r = run_simulation(trace, preset_config("chat", 16));
  std::int64_t stored = 0, reserved = 0, residence = 0;
  for (const SimRequest& q : trace) {
    for (std::int64_t g = 0; g <= q.output; ++g) {
      stored += q.prompt + g;
      reserved += q.output - g;
    }
    residence += q.output + 1;
  }
  for (const SimPolicy p : {SimPolicy::ReserveMax, SimPolicy::ExactFit}) {
    const SimSummary& s = r.run(p).summary;
    EXPECT_EQ(s.stored, stored);
    EXPECT_EQ(s.reserved, reserved);
    EXPECT_EQ(s.running_steps, residence);
    EXPECT_EQ(s.preemptions, 0);
  }
}

TEST(SimulationProperties, ReserveMaxWasteIsTheEnginesContiguousPolicyCost) {
  const SimConfig config = preset_config("chat", 16);
  const ContiguousPolicy reference(config.max_context, {{0, 1}});
  PolicySimulation sim(SimPolicy::ReserveMax, preset_trace("chat", 40, 2), config);
  while (!sim.done()) {
    const SimFrame& f = sim.step();
    std::vector<std::int64_t> lengths;
    for (const SimSpan& s : sim.block_map().spans) lengths.push_back(s.stored);
    const ContiguousCost cost = reference.cost(lengths);
    ASSERT_EQ(cost.used_slots, f.stored);
    ASSERT_EQ(cost.wasted_slots, f.reserved + f.internal) << "step " << f.step;
  }
}

TEST(SimulationProperties, PagedFiguresAreTheManagersSnapshot) {
  const SimConfig config{256, 16, 200};  // 16 blocks
  PagedAllocator paged(config);
  const std::vector<SimRequest> requests = {{0, 0, 20, 5}, {1, 0, 33, 3}, {2, 0, 1, 9}};
  for (const SimRequest& r : requests) ASSERT_TRUE(paged.admit(r, r.prompt));
  for (int i = 0; i < 4; ++i) paged.grow(2);
  const CacheSnapshot snap = snapshot_of(paged.manager());
  const SimMemory m = paged.memory();
  EXPECT_EQ(m.stored, snap.filled_slots);                  // 20 + 33 + 5
  EXPECT_EQ(m.stored + m.internal, snap.allocated_slots);  // (2 + 3 + 1) blocks
  EXPECT_EQ(m.stored, 58);
  EXPECT_EQ(m.internal, 6 * 16 - 58);
  // A request that needs more blocks than are free (11 of 10) is refused, leaving no trace.
  EXPECT_FALSE(paged.admit({3, 0, 170, 1}, 170));
  EXPECT_FALSE(paged.manager().has_sequence(3));
}

TEST(SimulationProperties, SteppingGivesTheFramesOfAFullRun) {
  const std::vector<SimRequest> trace = preset_trace("long-documents", 20, 9);
  const SimConfig config = preset_config("long-documents", 64);
  const PolicyRun full = run_policy(SimPolicy::Paged, trace, config);
  PolicySimulation sim(SimPolicy::Paged, trace, config);
  for (const SimFrame& want : full.frames) {
    const SimFrame& got = sim.step();
    ASSERT_EQ(got.stored, want.stored);
    ASSERT_EQ(got.internal, want.internal);
    ASSERT_EQ(got.running, want.running);
  }
  EXPECT_TRUE(sim.done());
  EXPECT_LE(sim.steps(), sim.step_limit());
  EXPECT_THROW(sim.step(), std::logic_error);
}

TEST(SimulationProperties, ConfigsThatCouldNeverServeARequestAreRejected) {
  const std::vector<SimRequest> trace = {{0, 0, 4, 4}};
  const auto message = [&](const SimConfig& c) {
    try {
      run_simulation(trace, c);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({0, 16, 8}).find("capacity 0"), std::string::npos);
  EXPECT_NE(message({64, 0, 8}).find("block size 0"), std::string::npos);
  EXPECT_NE(message({64, 257, 8}).find("block size 257"), std::string::npos);
  EXPECT_NE(message({64, 16, 128}).find("max context 128 exceeds the capacity of 64"),
            std::string::npos);
  // 100 slots in blocks of 16: 6 blocks hold 96 slots, fewer than a 100-token context.
  EXPECT_NE(message({100, 16, 100}).find("6 blocks of 16 slots hold 96"), std::string::npos);
  // A request longer than the context.
  EXPECT_NE(message({64, 16, 6}).find("more than max context 6"), std::string::npos);
  EXPECT_EQ(message({64, 16, 8}), "accepted");
}

}  // namespace
}  // namespace kvscope
