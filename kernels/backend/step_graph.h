// A decode step as one CUDA graph: the ~15 launches per layer are captured once from the
// stream and replayed with one cudaGraphLaunch, which removes the per-kernel launch cost that
// dominates batch-1 decode of a small model.
//
// A replay repeats the captured launches with the captured arguments: same grids, same
// scalars, same pointers. Only device memory they read may change between replays (the
// step's ints, uploaded before the launch, outside the graph). So the caller describes in a
// StepGraphKey every host value its launches depend on (shape, offsets into the ints, split
// count, buffer addresses); a different key is captured again and applied to the executable
// graph with cudaGraphExecUpdate, or instantiated anew when the update is refused (a changed
// topology, e.g. the split-merge kernel appearing).
//
// What may run inside the captured callable: kernel launches on the stream and host-side
// calls that do not touch it (cudaFuncSetAttribute, cudaGetLastError). No allocation, no
// synchronisation, no pageable memcpy: any of those fails the capture (cudaStreamCaptureMode
// ThreadLocal makes this thread's unsafe calls errors instead of silently uncaptured work).
// Any failure while capturing, instantiating or launching turns graphs off for good, with the
// reason kept, and the callable runs eagerly, now and from then on: graphs never make a step
// fail that an eager run would complete.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kvscope::cuda {

// Every host value a step's launches depend on, as a list of words compared for equality.
class StepGraphKey {
 public:
  StepGraphKey& add(std::int64_t value) {
    words_.push_back(value);
    return *this;
  }
  StepGraphKey& add(const void* pointer) {
    return add(static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(pointer)));
  }
  bool operator==(const StepGraphKey&) const = default;
  bool empty() const { return words_.empty(); }

 private:
  std::vector<std::int64_t> words_;
};

// What StepGraph::run did, counted over its lifetime (tests and benchmarks read these).
struct StepGraphStats {
  std::int64_t eager = 0;           // callable run directly on the stream
  std::int64_t captures = 0;        // successful captures
  std::int64_t updates = 0;         // captures applied to the executable graph in place
  std::int64_t instantiations = 0;  // captures instantiated as a new executable graph
  std::int64_t replays = 0;         // cudaGraphLaunch calls
};

class StepGraph {
 public:
  // Graphs on `stream`; off from the start when off_reason is non-empty ("turned off by ...").
  explicit StepGraph(cudaStream_t stream, std::string off_reason = {});
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  // Enqueues `launches` on the stream, as a graph or eagerly. A key unlike the previous
  // run's runs eagerly (a warm-up: lazy module loading and per-kernel attributes happen
  // outside a capture, and one-off shapes are never captured); the same key in two runs in a
  // row is captured and launched, and replayed while it is the graph's key. Does not
  // synchronise. An exception from an eager run propagates; one thrown while capturing turns
  // graphs off and the callable runs eagerly instead.
  void run(const StepGraphKey& key, const std::function<void()>& launches);

  bool enabled() const { return off_reason_.empty(); }
  // Why graphs are off ("" while on): the option, or the CUDA call or exception that failed.
  const std::string& off_reason() const { return off_reason_; }
  const StepGraphStats& stats() const { return stats_; }

 private:
  void run_eagerly(const std::function<void()>& launches);
  // Captures `launches` into a graph; nullptr (graphs off, reason kept) when that failed.
  cudaGraph_t capture(const std::function<void()>& launches);
  // Updates or replaces exec_ with `graph`; false (graphs off) when neither worked.
  bool install(cudaGraph_t graph);
  void turn_off(std::string reason);

  cudaStream_t stream_;
  std::string off_reason_;
  cudaGraph_t graph_ = nullptr;  // the capture exec_ was last instantiated or updated from
  cudaGraphExec_t exec_ = nullptr;
  StepGraphKey exec_key_;  // the key exec_ was captured for
  StepGraphKey last_key_;  // the previous run's key
  StepGraphStats stats_;
};

// Pinned host memory a step's ints are staged in, so their upload is a true asynchronous
// copy rather than a pageable one the driver stages (and which a capture could not hold).
// One buffer, reused: an upload first waits for the previous one's copy to have read it.
// Falls back to a pageable copy when pinned memory cannot be had. Not for use while the
// stream is capturing.
class PinnedStaging {
 public:
  PinnedStaging() = default;
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // Enqueues a copy of `bytes` from host `src` to device `dst` on `stream`; throws Error
  // naming the call when CUDA refuses the copy.
  void upload(const void* src, std::size_t bytes, void* dst, cudaStream_t stream);
  bool pinned() const { return host_ != nullptr; }

 private:
  void* host_ = nullptr;
  std::size_t capacity_ = 0;
  bool pinned_failed_ = false;
  cudaEvent_t copy_done_ = nullptr;  // recorded after each copy out of host_
  bool copy_pending_ = false;
};

}  // namespace kvscope::cuda
