// The compute backend interface: where the weights live and how a forward step runs.
// The CPU backend (cpu_backend.h) is the reference; the CUDA backend (kernels/) implements
// the same interface and is tested against it. The KV cache bookkeeping (which block holds
// which token) is the KvCacheManager's; a backend only reads and writes the slots it is
// given, in host memory (CPU) or in device memory with the same block layout (CUDA).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/kv_ids.h"
#include "plan/cuda_workspace.h"
#include "text/tokenizer.h"

namespace kvscope {

// One sequence's share of a forward step: `tokens` are appended at positions
// start_pos .. start_pos + n - 1. The caller has already grown the sequence in the KV
// cache by n (so start_pos + n == kv.n_tokens(seq)).
struct SequenceChunk {
  SeqId seq = 0;
  std::span<const TokenId> tokens;
  std::int64_t start_pos = 0;
  // Logits for every token of the chunk (perplexity) or only for the last one (generation).
  bool all_logits = false;
  // The request's prompt length: positions [0, n_prompt) of the sequence hold its prompt
  // (0: not a request's, e.g. a perplexity run). A backend may treat prompt chunks apart.
  std::int64_t n_prompt = 0;
};

// Where the memory of a backend goes, in bytes. The live panel charts exactly these.
struct MemoryInfo {
  std::string device;                // "CPU (2 threads)", "NVIDIA GeForce RTX 4090"
  std::uint64_t total = 0;           // the device's memory, or the simulated budget on the CPU
  std::uint64_t weights = 0;         // model weights as held by the backend
  std::uint64_t kv_pool = 0;         // the KV block pool (all of it, used or not)
  std::uint64_t workspace = 0;       // activations, logits and other scratch
  std::uint64_t used_by_others = 0;  // memory this process does not own (other apps)
  std::uint64_t free = 0;            // total - everything above
};

// A device's memory as the backend measures it: what the engine sizes its KV pool from
// when no budget is given.
struct DeviceMemory {
  std::uint64_t total = 0;
  std::uint64_t used_by_others = 0;  // in use, but not by this backend
};

// The model layers a backend runs, [begin, end). A whole-model backend runs them all (end
// -1 stands for n_layers), embeds the tokens and computes the logits. A model split between
// two backends (split_backend.h) gives each a part: such a backend runs its layers on the
// residual stream it is handed (forward_layers), and computes the logits only when its part
// ends the model.
struct LayerRange {
  std::int64_t begin = 0;
  std::int64_t end = -1;  // -1: n_layers
  // Whether this is the whole model (of n_layers layers).
  bool whole(std::int64_t n_layers) const { return begin == 0 && (end < 0 || end == n_layers); }
  std::int64_t end_in(std::int64_t n_layers) const { return end < 0 ? n_layers : end; }
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;

  // Runs the model over the chunks; returns logits [n_rows][vocab] where each chunk
  // contributes its token count (all_logits) or one row, in chunk order.
  virtual void forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                       std::vector<float>& logits) = 0;

  // forward() for greedy decoding: the greedy_pick (greedy.h) of every logits row, in the
  // same row order, instead of the rows. A GPU backend picks on the device and copies one id
  // per row; the default runs forward() and picks on the host.
  virtual void forward_greedy(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                              std::vector<TokenId>& picks);

  // The layers this backend runs (the whole model unless it was built for a part).
  virtual LayerRange layer_range() const { return {}; }

  // A backend built for a part of the model runs its layers [begin, end) of one step on
  // `hidden`, the residual stream [n_tokens][dim] f32 of the step's tokens in chunk order:
  // on entry what enters layer begin, on return what leaves layer end - 1; a part that ends
  // the model writes the logits rows as forward() does instead (hidden is then scratch).
  // The default: UsageError (a whole-model backend takes tokens, through forward()).
  virtual void forward_layers(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                              std::vector<float>& hidden, std::vector<float>& logits);

  // Performs copy-on-write copies the KV manager decided on (host storage: already done).
  virtual void copy_blocks(std::span<const BlockCopy> copies) { (void)copies; }

  // Whether the KV manager should keep block bytes in host memory (the CPU backend).
  virtual bool uses_host_kv_storage() const = 0;

  virtual MemoryInfo memory_info(const KvCacheManager& kv) const = 0;

  // The device's memory (a GPU backend), or nullopt where the engine sizes the pool itself
  // (the CPU backend, whose budget is a simulated device or a number of full contexts).
  virtual std::optional<DeviceMemory> device_memory() const { return std::nullopt; }

  // The options the planner sizes this backend's CUDA workspace with (cuda_workspace.h: its
  // device's compute capability and SMs, its GEMM threshold and 8-bit codes as asked, the
  // fp16 slab from the model's shape), so that the engine's pool and the plan count the same
  // buffers; nullopt for a backend with no CUDA workspace.
  virtual std::optional<CudaWorkspaceOptions> cuda_plan_options() const { return std::nullopt; }

 private:
  std::vector<float> greedy_logits_;  // the default forward_greedy's rows, kept between steps
};

}  // namespace kvscope
