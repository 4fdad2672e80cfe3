// Streams, events, graphs and launches in the CUDA emulation. A stream is an in-order queue
// whose operations run when they are issued, which is one order the device could choose; while
// a stream captures, operations are recorded into a graph instead, with their arguments as they
// were at capture (as the device keeps them), and a graph launch replays them in order.
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "emu_internal.h"
#include "emu_runtime_api.h"

namespace kvscope::emu {

struct Node {
  const void* kind;
  Work work;
};
struct Graph {
  std::vector<Node> nodes;
};
struct GraphExec {
  std::vector<Node> nodes;
};
struct Stream {
  unsigned flags = 0;
  Graph* capture = nullptr;  // the graph being recorded, or null
  bool invalidated = false;  // a refused call broke the capture
};
struct Event {
  std::chrono::steady_clock::time_point at{};
  bool recorded = false;
};

namespace {

Stream t_legacy_default;                     // the legacy default stream: never captures
thread_local Stream* t_capturing = nullptr;  // the stream this thread captures on, if any

Stream* resolve(cudaStream_t s) {
  if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread) return &t_legacy_default;
  return s;
}

bool is_default(cudaStream_t s) {
  return resolve(s) == &t_legacy_default;
}

std::mutex attributes_mutex;
std::map<const void*, int>& max_dynamic_shared() {
  static std::map<const void*, int> m;
  return m;
}

std::string size_text(std::size_t bytes) {
  return std::to_string(bytes) + " bytes";
}

// What the device refuses before running anything: an empty or oversized block or grid, and
// dynamic shared memory past the default limit without the kernel's opt-in attribute.
cudaError_t check_config(const LaunchConfig& c) {
  const unsigned long long threads = 1ull * c.block.x * c.block.y * c.block.z;
  if (threads == 0 || c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0) {
    set_error(cudaErrorInvalidConfiguration, "a launch with an empty grid or block");
    return cudaErrorInvalidConfiguration;
  }
  if (threads > kMaxThreadsPerBlock || c.block.z > 64) {
    set_error(cudaErrorInvalidConfiguration,
              "a block of " + std::to_string(threads) + " threads (at most 1024, z at most 64)");
    return cudaErrorInvalidConfiguration;
  }
  if (c.grid.x > 2147483647u || c.grid.y > 65535u || c.grid.z > 65535u) {
    set_error(cudaErrorInvalidConfiguration, "a grid dimension out of range");
    return cudaErrorInvalidConfiguration;
  }
  std::size_t limit = kSharedPerBlock;
  {
    std::lock_guard lock(attributes_mutex);
    const auto it = max_dynamic_shared().find(c.kernel);
    if (it != max_dynamic_shared().end()) limit = static_cast<std::size_t>(it->second);
  }
  if (c.dynamic_shared_bytes > limit) {
    set_error(cudaErrorInvalidValue,
              "dynamic shared memory of " + size_text(c.dynamic_shared_bytes) +
                  " past the kernel's limit of " + size_text(limit) +
                  (limit == kSharedPerBlock
                       ? " (cudaFuncAttributeMaxDynamicSharedMemorySize was not raised)"
                       : ""));
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

}  // namespace

bool refuse_during_capture() {
  if (!t_capturing) return false;
  t_capturing->invalidated = true;
  set_error(cudaErrorStreamCaptureUnsupported,
            "a synchronous call while this thread captures a graph");
  return true;
}

cudaError_t submit(cudaStream_t stream, const void* kind, Work work) {
  if (const cudaError_t s = sticky_error(); s != cudaSuccess) return s;
  Stream* st = resolve(stream);
  if (st->capture) {
    st->capture->nodes.push_back({kind, std::move(work)});
    return cudaSuccess;
  }
  if (t_capturing && is_default(stream))
    return refuse_during_capture(), cudaErrorStreamCaptureUnsupported;
  return work();
}

cudaError_t set_function_attribute(const void* kernel, cudaFuncAttribute attr, int value) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return result(cudaErrorInvalidValue);
  if (value < 0 || static_cast<std::size_t>(value) > kSharedPerBlockOptin) {
    set_error(cudaErrorInvalidValue, "a dynamic shared memory limit of " + std::to_string(value) +
                                         " bytes, past the device's " +
                                         size_text(kSharedPerBlockOptin));
    return result(cudaErrorInvalidValue);
  }
  std::lock_guard lock(attributes_mutex);
  max_dynamic_shared()[kernel] = value;
  return result(cudaSuccess);
}

void launch(const LaunchConfig& cfg, std::function<void()> body) {
  if (sticky_error() != cudaSuccess) return;
  if (check_config(cfg) != cudaSuccess) return;
  const cudaError_t err =
      submit(cfg.stream, cfg.kernel,
             [cfg, body = std::move(body)]() -> cudaError_t { return run_grid(cfg, body); });
  if (err != cudaSuccess) set_error(err);
}

}  // namespace kvscope::emu

using kvscope::emu::result;

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  if (!stream) return result(cudaErrorInvalidValue);
  *stream = new kvscope::emu::Stream{flags, nullptr, false};
  return result(cudaSuccess);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (kvscope::emu::is_default(stream)) return result(cudaErrorInvalidResourceHandle);
  delete stream;
  return result(cudaSuccess);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (kvscope::emu::resolve(stream)->capture || kvscope::emu::refuse_during_capture())
    return result(cudaErrorStreamCaptureUnsupported);
  return result(cudaSuccess);  // every operation ran when it was issued
}

cudaError_t cudaDeviceSynchronize() {
  if (kvscope::emu::refuse_during_capture()) return result(cudaErrorStreamCaptureUnsupported);
  return result(cudaSuccess);
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  namespace emu = kvscope::emu;
  if (emu::is_default(stream)) {
    emu::set_error(cudaErrorStreamCaptureUnsupported, "the legacy default stream cannot capture");
    return result(cudaErrorStreamCaptureUnsupported);
  }
  if (stream->capture || emu::t_capturing) return result(cudaErrorIllegalInstruction);
  stream->capture = new emu::Graph;
  stream->invalidated = false;
  emu::t_capturing = stream;
  return result(cudaSuccess);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  namespace emu = kvscope::emu;
  if (!graph || emu::is_default(stream) || !stream->capture) return result(cudaErrorInvalidValue);
  *graph = nullptr;
  emu::Graph* g = stream->capture;
  stream->capture = nullptr;
  if (emu::t_capturing == stream) emu::t_capturing = nullptr;
  if (stream->invalidated) {
    delete g;
    stream->invalidated = false;
    return result(cudaErrorStreamCaptureInvalidated);
  }
  *graph = g;
  return result(cudaSuccess);
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  if (!status) return result(cudaErrorInvalidValue);
  const kvscope::emu::Stream* s = kvscope::emu::resolve(stream);
  *status = !s->capture      ? cudaStreamCaptureStatusNone
            : s->invalidated ? cudaStreamCaptureStatusInvalidated
                             : cudaStreamCaptureStatusActive;
  return result(cudaSuccess);
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) {
  if (!event) return result(cudaErrorInvalidValue);
  *event = new kvscope::emu::Event;
  return result(cudaSuccess);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return result(cudaSuccess);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  static const char kTag = 0;
  if (!event) return result(cudaErrorInvalidResourceHandle);
  return result(kvscope::emu::submit(stream, &kTag, [event]() -> cudaError_t {
    event->at = std::chrono::steady_clock::now();
    event->recorded = true;
    return cudaSuccess;
  }));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!event) return result(cudaErrorInvalidResourceHandle);
  return result(cudaSuccess);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) {
  if (!ms || !start || !stop) return result(cudaErrorInvalidValue);
  if (!start->recorded || !stop->recorded) return result(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(stop->at - start->at).count();
  return result(cudaSuccess);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  if (!exec || !graph) return result(cudaErrorInvalidValue);
  *exec = new kvscope::emu::GraphExec{graph->nodes};
  return result(cudaSuccess);
}

// The update succeeds when the graph has the same nodes in the same order (the same kernels and
// kinds of copy): only their parameters change, as the device allows.
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                cudaGraphExecUpdateResultInfo* info) {
  if (!exec || !graph) return result(cudaErrorInvalidValue);
  bool same = exec->nodes.size() == graph->nodes.size();
  for (std::size_t i = 0; same && i < graph->nodes.size(); ++i)
    same = exec->nodes[i].kind == graph->nodes[i].kind;
  if (info) info->result = same ? 0 : 2;  // cudaGraphExecUpdateSuccess / ErrorTopologyChanged
  if (!same) return result(cudaErrorGraphExecUpdateFailure);
  exec->nodes = graph->nodes;
  return result(cudaSuccess);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  static const char kTag = 0;
  if (!exec) return result(cudaErrorInvalidValue);
  return result(kvscope::emu::submit(stream, &kTag, [exec]() -> cudaError_t {
    for (const kvscope::emu::Node& n : exec->nodes)
      if (const cudaError_t err = n.work(); err != cudaSuccess) return err;
    return cudaSuccess;
  }));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return result(cudaSuccess);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return result(cudaSuccess);
}
