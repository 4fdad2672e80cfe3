#include "backend/step_graph.h"

#include <bit>
#include <cstring>
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "backend/cuda_check.h"

namespace kvscope::cuda {

namespace {

// "cudaStreamEndCapture: cudaErrorStreamCaptureInvalidated (...)", clearing the error so the
// next launch check does not report it again.
std::string cuda_failure(const char* call, cudaError_t err) {
  cudaGetLastError();
  return fmt::format("{}: {} ({})", call, cudaGetErrorName(err), cudaGetErrorString(err));
}

}  // namespace

StepGraph::StepGraph(cudaStream_t stream, std::string off_reason)
    : stream_(stream), off_reason_(std::move(off_reason)) {}

StepGraph::~StepGraph() {
  // an executable graph still running is freed by the driver when it completes
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void StepGraph::run(const StepGraphKey& key, const std::function<void()>& launches) {
  if (!enabled()) return run_eagerly(launches);
  const bool repeated = key == last_key_;
  last_key_ = key;
  if (!exec_ || !(key == exec_key_)) {
    if (!repeated) return run_eagerly(launches);  // a new shape: warm up, capture if it repeats
    cudaGraph_t graph = capture(launches);
    if (!graph || !install(graph)) return run_eagerly(launches);
    exec_key_ = key;
  }
  if (const cudaError_t err = cudaGraphLaunch(exec_, stream_); err != cudaSuccess) {
    turn_off(cuda_failure("cudaGraphLaunch", err));
    return run_eagerly(launches);
  }
  ++stats_.replays;
}

void StepGraph::run_eagerly(const std::function<void()>& launches) {
  ++stats_.eager;
  launches();
}

cudaGraph_t StepGraph::capture(const std::function<void()>& launches) {
  // ThreadLocal: an unsafe call of this thread (cudaMalloc, a synchronising copy) fails and
  // invalidates the capture, which we see; other threads (another engine in the process)
  // stay free to allocate, which Global mode would forbid them while we capture.
  if (const cudaError_t err = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal);
      err != cudaSuccess) {
    turn_off(cuda_failure("cudaStreamBeginCapture", err));
    return nullptr;
  }
  std::string failure;
  try {
    launches();
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "unknown exception";
  }
  // A capture is always ended, even after a failure: that returns the stream to normal
  // operation (an invalidated capture gives cudaErrorStreamCaptureInvalidated, no graph).
  cudaGraph_t graph = nullptr;
  const cudaError_t err = cudaStreamEndCapture(stream_, &graph);
  if (failure.empty() && err != cudaSuccess) failure = cuda_failure("cudaStreamEndCapture", err);
  if (failure.empty() && !graph) failure = "cudaStreamEndCapture gave no graph";
  if (!failure.empty()) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    turn_off("capturing the decode step failed: " + failure);
    return nullptr;
  }
  ++stats_.captures;
  return graph;
}

bool StepGraph::install(cudaGraph_t graph) {
  if (exec_) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(exec_, graph, &info) == cudaSuccess) {
      ++stats_.updates;
      if (graph_) cudaGraphDestroy(graph_);
      graph_ = graph;
      return true;
    }
    cudaGetLastError();  // a refused update is expected (topology changed): instantiate anew
    cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }
  if (graph_) cudaGraphDestroy(graph_);
  graph_ = graph;
  if (const cudaError_t err = cudaGraphInstantiate(&exec_, graph_, 0); err != cudaSuccess) {
    exec_ = nullptr;
    turn_off(cuda_failure("cudaGraphInstantiate", err));
    return false;
  }
  ++stats_.instantiations;
  return true;
}

void StepGraph::turn_off(std::string reason) {
  off_reason_ = std::move(reason);
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
}

PinnedStaging::~PinnedStaging() {
  if (copy_done_) cudaEventDestroy(copy_done_);
  if (host_) cudaFreeHost(host_);
}

void PinnedStaging::upload(const void* src, std::size_t bytes, void* dst, cudaStream_t stream) {
  if (bytes == 0) return;
  // the previous copy out of host_ must have finished before host_ is rewritten or freed
  if (copy_pending_) KVSCOPE_CUDA_CHECK(cudaEventSynchronize(copy_done_));
  copy_pending_ = false;
  if (bytes > capacity_ && !pinned_failed_) {
    if (host_) cudaFreeHost(host_);
    host_ = nullptr;
    capacity_ = 0;
    const std::size_t want = std::bit_ceil(bytes);
    if (cudaHostAlloc(&host_, want, cudaHostAllocDefault) == cudaSuccess) {
      capacity_ = want;
    } else {
      host_ = nullptr;
      pinned_failed_ = true;  // pageable from now on: slower, still correct
      cudaGetLastError();
    }
  }
  if (!host_ || bytes > capacity_) {
    // a pageable copy returns once the driver has staged `src`
    KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    return;
  }
  std::memcpy(host_, src, bytes);
  KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, host_, bytes, cudaMemcpyHostToDevice, stream));
  if (!copy_done_) {
    KVSCOPE_CUDA_CHECK(cudaEventCreateWithFlags(&copy_done_, cudaEventDisableTiming));
  }
  KVSCOPE_CUDA_CHECK(cudaEventRecord(copy_done_, stream));
  copy_pending_ = true;
}

}  // namespace kvscope::cuda
