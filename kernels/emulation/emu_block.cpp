// The execution model of the CUDA emulation: every thread of a block is a fiber on one OS
// thread. A round resumes each ready thread (in an order shuffled by KVSCOPE_EMU_SEED) until
// it reaches a barrier, a warp collective or its end; then the warp collectives whose lanes
// have all arrived complete, and when nothing else can move, a barrier every live thread waits
// at opens. Blocks run one after another, in a shuffled order too, so a kernel that depends on
// an order the hardware does not promise gives different results from run to run of its test.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "emu_device.h"
#include "emu_internal.h"
#include "emu_lane_stacks.h"
#include "emu_order_rng.h"
#include "emu_shared_window.h"
#include "emu_shuffle.h"

namespace kvscope::emu {

thread_local constinit ThreadContext* t_thread = nullptr;
thread_local constinit BlockContext* t_block = nullptr;

namespace {

enum class LaneState : std::uint8_t { Ready, AtBarrier, AtWarp, Done };

struct Lane {
  ThreadContext ctx{};
  LaneState state = LaneState::Done;
  WarpRequest* request = nullptr;
  unsigned vote = 0;
  ctx::fiber fiber;  // resumes this lane (empty while it runs)
};

// The lanes of one OS thread, kept from launch to launch (creating a fiber maps a stack), side
// by side in one array: the scheduler reads their states between every two context switches.
struct LanePool {
  LaneStacks stacks;  // first: destroyed after the lanes' fibers
  std::array<Lane, kMaxLanes> lanes;
  int created = 0;
  const std::function<void()>* body = nullptr;
  bool aborting = false;
  Lane* running = nullptr;
  ctx::fiber scheduler;  // resumes the scheduler while lanes run
  Lane* from = nullptr;  // who the switch in progress suspends (null: the scheduler)
  // A pass: the lanes to run in turn, each switching straight to the next when it stops (one
  // context switch per lane instead of two through the scheduler), the last to the scheduler.
  std::array<int, 1024> pass{};
  int pass_next = 0, pass_count = 0;
  std::string fault;
  cudaError_t fault_code = cudaSuccess;
};
thread_local LanePool t_pool;

std::string dim_text(uint3 d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

// A switch returns the continuation of whoever switched to us: keep it where it belongs.
void keep(ctx::fiber&& c) {
  if (t_pool.from) {
    t_pool.from->fiber = std::move(c);
  } else {
    t_pool.scheduler = std::move(c);
  }
}

// Suspends `me` (null: the scheduler) and runs `target` (null: the scheduler) from `slot`.
void switch_to(ctx::fiber& slot, Lane* me, Lane* target) {
  t_pool.from = me;
  t_pool.running = target;
  t_thread = target ? &target->ctx : nullptr;
  keep(std::move(slot).resume());
}

// The pass's next lane that is ready to run, or null when the pass is over.
Lane* next_in_pass() {
  while (t_pool.pass_next < t_pool.pass_count) {
    Lane& l = t_pool.lanes[static_cast<std::size_t>(
        t_pool.pass[static_cast<std::size_t>(t_pool.pass_next++)])];
    if (l.state == LaneState::Ready) return &l;
  }
  return nullptr;
}

// From a lane that stops (at a barrier, a collective or its end) to the next of the pass, or
// back to the scheduler when the pass is over or the block has failed.
void pass_on(Lane& me) {
  Lane* next = t_pool.fault_code == cudaSuccess || t_pool.aborting ? next_in_pass() : nullptr;
  if (next) {
    switch_to(next->fiber, &me, next);
  } else {
    switch_to(t_pool.scheduler, &me, nullptr);
  }
}

// Suspends a lane inside its kernel; unwinds the kernel when its block is aborted.
void yield_from_kernel(Lane& lane) {
  pass_on(lane);
  if (t_pool.aborting) throw AbortLane{};
}

// Runs the lanes listed in t_pool.pass[0, count) in turn; returns when the pass is over.
void run_pass(int count) {
  t_pool.pass_next = 0;
  t_pool.pass_count = count;
  if (Lane* first = next_in_pass()) switch_to(first->fiber, nullptr, first);
}

void run_body(Lane& lane) {
  try {
    (*t_pool.body)();
  } catch (const AbortLane&) {
  } catch (const DeviceFault& f) {
    if (t_pool.fault_code == cudaSuccess) {
      t_pool.fault_code = f.code;
      t_pool.fault = "thread " + dim_text(lane.ctx.thread_idx) + ": " + f.what();
    }
  } catch (const std::exception& e) {
    if (t_pool.fault_code == cudaSuccess) {
      t_pool.fault_code = cudaErrorLaunchFailure;
      t_pool.fault = "thread " + dim_text(lane.ctx.thread_idx) + " threw: " + e.what();
    }
  }
}

void make_lane(int index) {
  Lane* l = &t_pool.lanes[static_cast<std::size_t>(index)];
  l->fiber = ctx::fiber(std::allocator_arg, SliceAllocator{t_pool.stacks.top(index)},
                        [l](ctx::fiber&& from) {
                          keep(std::move(from));
                          for (;;) {  // one kernel body per resume from the Done state
                            // a lane of an aborted block that never started stays out
                            if (!t_pool.aborting) run_body(*l);
                            l->state = LaneState::Done;
                            pass_on(*l);
                          }
                          return ctx::fiber{};
                        });
  t_pool.created = index + 1;
}

const char* op_name(WarpOp op) {
  switch (op) {
    case WarpOp::Sync:
      return "__syncwarp";
    case WarpOp::Idx:
      return "__shfl_sync";
    case WarpOp::Up:
      return "__shfl_up_sync";
    case WarpOp::Down:
      return "__shfl_down_sync";
    case WarpOp::Xor:
      return "__shfl_xor_sync";
    case WarpOp::Any:
      return "__any_sync";
    case WarpOp::All:
      return "__all_sync";
    case WarpOp::Ballot:
      return "__ballot_sync";
  }
  return "?";
}

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// Runs a block: each warp in turn (in a shuffled order) goes as far as it can, its collectives
// completing as soon as all their lanes have arrived, until every warp waits at the block
// barrier or has finished; then the barrier opens and the next round starts.
class BlockScheduler {
 public:
  BlockScheduler(const LaunchConfig& cfg, std::uint64_t seed) : cfg_(cfg), rng_(seed) {
    n_threads_ = static_cast<int>(cfg.block.x * cfg.block.y * cfg.block.z);
    n_warps_ = (n_threads_ + 31) / 32;
    shuffle_ = seed != 0;
    while (t_pool.created < n_threads_) make_lane(t_pool.created);
    warp_order_.resize(static_cast<std::size_t>(n_warps_));
  }

  // Runs one block; false with t_pool.fault set when it failed.
  bool run() {
    for (int i = 0; i < n_threads_; ++i) {
      Lane& l = lane(i);
      const auto u = static_cast<unsigned>(i);
      l.ctx.thread_idx = {u % cfg_.block.x, (u / cfg_.block.x) % cfg_.block.y,
                          u / (cfg_.block.x * cfg_.block.y)};
      l.ctx.lane = i % 32;
      l.state = LaneState::Ready;
      l.request = nullptr;
    }
    for (;;) {
      std::iota(warp_order_.begin(), warp_order_.end(), 0);
      if (shuffle_) rng_.shuffle(warp_order_.data(), warp_order_.size());
      for (const int w : warp_order_) {
        run_warp(w);
        if (failed()) return abort_block();
      }
      if (all_done()) return true;
      if (!open_barrier()) deadlock();
      if (failed()) return abort_block();
    }
  }

 private:
  Lane& lane(int i) { return t_pool.lanes[static_cast<std::size_t>(i)]; }
  bool failed() const { return t_pool.fault_code != cudaSuccess; }

  void fail(cudaError_t code, std::string what) {
    if (failed()) return;
    t_pool.fault_code = code;
    t_pool.fault = std::move(what);
  }

  // Runs warp w's ready lanes, completing its collectives, until none can move.
  void run_warp(int w) {
    const int base = w * 32, count = std::min(32, n_threads_ - base);
    for (;;) {
      std::iota(t_pool.pass.begin(), t_pool.pass.begin() + count, base);
      if (shuffle_) rng_.shuffle(t_pool.pass.data(), static_cast<std::size_t>(count));
      run_pass(count);
      if (failed() || !complete_warp_collectives(base, count)) return;
    }
  }

  bool all_done() {
    for (int i = 0; i < n_threads_; ++i)
      if (lane(i).state != LaneState::Done) return false;
    return true;
  }

  // Completes the collectives of the warp at base whose lanes have all arrived; false when
  // none could.
  bool complete_warp_collectives(int base, int count) {
    bool progress = false;
    for (int l = 0; l < count; ++l) {
      if (lane(base + l).state != LaneState::AtWarp) continue;
      if (group_arrived(base, count, l)) {
        complete(base, *lane(base + l).request);
        progress = true;
      }
      if (failed()) return false;
    }
    return progress;
  }

  // Whether every lane of lane l's mask waits at the same collective (faults on misuse).
  bool group_arrived(int base, int count, int l) {
    const WarpRequest& r = *lane(base + l).request;
    // built only on a fault: this check runs at every collective
    const auto where = [&] { return "warp " + std::to_string(base / 32) + ": "; };
    if (!((r.mask >> l) & 1u)) {
      fail(cudaErrorLaunchFailure, where() + "lane " + std::to_string(l) + " calls " +
                                       op_name(r.op) + " with mask " + hex(r.mask) +
                                       ", which does not include it");
      return false;
    }
    for (int m = 0; m < 32; ++m) {
      if (!((r.mask >> m) & 1u)) continue;
      if (m >= count) {
        fail(cudaErrorLaunchFailure, where() + op_name(r.op) + " mask " + hex(r.mask) +
                                         " names lane " + std::to_string(m) +
                                         ", which the block does not have");
        return false;
      }
      const Lane& other = lane(base + m);
      if (other.state == LaneState::Done) {
        fail(cudaErrorLaunchFailure, where() + "lane " + std::to_string(l) + " waits in " +
                                         op_name(r.op) + " for lane " + std::to_string(m) +
                                         ", which has exited");
        return false;
      }
      if (other.state != LaneState::AtWarp) return false;
      const WarpRequest& o = *other.request;
      if (o.op != r.op || o.mask != r.mask || o.size != r.size) {
        fail(cudaErrorLaunchFailure,
             where() + "lanes " + std::to_string(l) + " and " + std::to_string(m) +
                 " meet at different warp collectives: " + op_name(r.op) + " mask " + hex(r.mask) +
                 " and " + op_name(o.op) + " mask " + hex(o.mask));
        return false;
      }
    }
    return true;
  }

  void complete(int base, const WarpRequest& first) {
    const unsigned mask = first.mask;
    unsigned ballot = 0;
    for (int m = 0; m < 32; ++m)
      if ((mask >> m) & 1u && lane(base + m).request->predicate) ballot |= 1u << m;
    for (int m = 0; m < 32; ++m) {
      if (!((mask >> m) & 1u)) continue;
      Lane& dst = lane(base + m);
      WarpRequest& r = *dst.request;
      switch (r.op) {
        case WarpOp::Sync:
          break;
        case WarpOp::Any:
          dst.vote = ballot != 0;
          break;
        case WarpOp::All:
          dst.vote = ballot == mask;
          break;
        case WarpOp::Ballot:
          dst.vote = ballot;
          break;
        default: {
          const int j = shuffle_source(r, m);
          if (!((mask >> j) & 1u)) {
            fail(cudaErrorLaunchFailure,
                 "warp " + std::to_string(base / 32) + ": lane " + std::to_string(m) + " of " +
                     op_name(r.op) + " reads lane " + std::to_string(j) +
                     ", which is not in the mask " + hex(mask) + " (its value is undefined)");
            return;
          }
          copy_value(r.result, lane(base + j).request->value, r.size);
        }
      }
    }
    for (int m = 0; m < 32; ++m) {
      if (!((mask >> m) & 1u)) continue;
      lane(base + m).state = LaneState::Ready;
    }
  }

  // Opens the block barrier when every live thread waits at it.
  bool open_barrier() {
    bool any = false;
    for (int i = 0; i < n_threads_; ++i) {
      const LaneState s = lane(i).state;
      if (s == LaneState::AtWarp) return false;
      any |= s == LaneState::AtBarrier;
    }
    if (!any) return false;
    for (int i = 0; i < n_threads_; ++i)
      if (lane(i).state == LaneState::AtBarrier) lane(i).state = LaneState::Ready;
    return true;
  }

  void deadlock() {
    std::string at_barrier, at_warp;
    for (int i = 0; i < n_threads_; ++i) {
      const Lane& l = lane(i);
      if (l.state == LaneState::AtBarrier && at_barrier.empty())
        at_barrier = "thread " + std::to_string(i) + " waits at __syncthreads";
      if (l.state == LaneState::AtWarp && at_warp.empty())
        at_warp = "thread " + std::to_string(i) + " waits in " + op_name(l.request->op) +
                  " (mask " + hex(l.request->mask) + ")";
    }
    fail(cudaErrorLaunchFailure, "deadlock: " + at_barrier + (at_barrier.empty() ? "" : ", ") +
                                     at_warp + ", and no barrier or collective can complete");
  }

  // Unwinds every lane still inside the kernel; the fault stays recorded.
  bool abort_block() {
    t_pool.aborting = true;
    int count = 0;
    for (int i = 0; i < n_threads_; ++i) {
      if (lane(i).state == LaneState::Done) continue;
      lane(i).state = LaneState::Ready;
      t_pool.pass[static_cast<std::size_t>(count++)] = i;
    }
    run_pass(count);
    t_pool.aborting = false;
    return false;
  }

  const LaunchConfig& cfg_;
  OrderRng rng_;
  bool shuffle_ = true;
  int n_threads_ = 0;
  int n_warps_ = 0;
  std::vector<int> warp_order_;
};

thread_local SharedWindow t_shared;

std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    const char* v = std::getenv("KVSCOPE_EMU_SEED");
    return v ? std::strtoull(v, nullptr, 10) : 1ull;
  }();
  return seed;
}

}  // namespace

void device_fault(cudaError_t code, const char* what) {
  throw DeviceFault{code, what};
}

void block_barrier() {
  Lane& l = *t_pool.running;
  l.state = LaneState::AtBarrier;
  yield_from_kernel(l);
}

unsigned warp_collective(WarpRequest& request) {
  Lane& l = *t_pool.running;
  l.state = LaneState::AtWarp;
  l.request = &request;
  yield_from_kernel(l);
  l.request = nullptr;
  return l.vote;
}

cudaError_t run_grid(const LaunchConfig& cfg, const std::function<void()>& body) {
  thread_local std::uint64_t launches = 0;
  const std::uint64_t seed =
      base_seed() == 0 ? 0 : base_seed() * 0x9e3779b97f4a7c15ull + ++launches;
  BlockContext block{};
  block.block_dim = cfg.block;
  block.grid_dim = cfg.grid;
  block.dynamic_shared_bytes = cfg.dynamic_shared_bytes;
  block.dynamic_shared = t_shared.place(cfg.dynamic_shared_bytes);
  BlockContext* const outer_block = t_block;
  ThreadContext* const outer_thread = t_thread;
  t_block = &block;
  t_pool.body = &body;
  t_pool.fault_code = cudaSuccess;
  t_pool.fault.clear();

  const std::uint64_t n_blocks = std::uint64_t{cfg.grid.x} * cfg.grid.y * cfg.grid.z;
  std::vector<std::uint64_t> order(n_blocks);
  std::iota(order.begin(), order.end(), std::uint64_t{0});
  OrderRng rng(seed);
  if (seed != 0) rng.shuffle(order.data(), order.size());

  BlockScheduler scheduler(cfg, seed);
  cudaError_t err = cudaSuccess;
  for (const std::uint64_t b : order) {
    block.block_idx = {static_cast<unsigned>(b % cfg.grid.x),
                       static_cast<unsigned>((b / cfg.grid.x) % cfg.grid.y),
                       static_cast<unsigned>(b / (std::uint64_t{cfg.grid.x} * cfg.grid.y))};
    // uninitialised shared memory reads as NaN (0xff bytes), as likely on the device as zeros
    std::memset(block.dynamic_shared, 0xff, cfg.dynamic_shared_bytes);
    if (!scheduler.run()) {
      err = t_pool.fault_code;
      set_error(err, "block " + dim_text(block.block_idx) + ", " + t_pool.fault);
      break;
    }
  }
  t_block = outer_block;
  t_thread = outer_thread;
  t_pool.body = nullptr;
  return err;
}

}  // namespace kvscope::emu
