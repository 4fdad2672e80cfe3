// The Engine: what the app, the CLI and the UI worker use. It owns a loaded model, its
// tokenizer, a backend, the paged KV cache and the scheduler, and runs requests step by
// step. No global state: two engines (two models) can live in one process.
//
// Threading: one thread owns the engine and calls submit/fork/step; cancel() may be
// called from any thread. Callbacks run on the owning thread during step().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kv/cache_snapshot.h"
#include "kv/kv_cache_config.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_cache_observer.h"
#include "model/model.h"
#include "plan/exact_tail_rule.h"
#include "plan/memory_model.h"
#include "run/backend.h"
#include "run/request.h"
#include "run/scheduler/scheduler.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace kvscope {

struct EngineOptions;
class CpuBackend;
class SplitBackend;
struct SplitMemory;
// Which backend decodes: CUDA when it works, else the CPU (Auto); or the one named, an error
// when it cannot run (Cuda).
enum class BackendChoice { Auto, Cpu, Cuda };
// "auto", "cpu" or "cuda"; UsageError naming the choices for anything else.
BackendChoice parse_backend_choice(std::string_view name);
// Makes a non-CPU backend (the app registers the CUDA one); nullptr = unavailable, with
// the reason written to *why.
using BackendFactory =
    std::function<std::unique_ptr<Backend>(const Model&, const EngineOptions&, std::string* why)>;

struct EngineOptions {
  BackendChoice backend = BackendChoice::Auto;
  BackendFactory cuda_factory;  // empty: this build has no CUDA backend
  // Layers on the GPU when the CUDA backend runs, the rest on the CPU (run/split_backend.h;
  // llama.cpp's -ngl): kAllGpuLayers (every layer, as without a split, unless the whole
  // model's weights and workspace leave the GPU no room for KV: then as auto),
  // kAutoGpuLayers (the most whose weights, KV cache for one context_length sequence and
  // workspace fit the GPU's memory budget: run/layer_split.h), or a count (0: the CPU alone;
  // n_layers or more: all).
  std::int64_t gpu_layers = kAllGpuLayers;
  int n_threads = 0;  // CPU threads (0: all cores)
  // CPU: activations encoded per weight type as llama.cpp does (cpu/matmul.h) and float SIMD
  // attention (cpu/attention/paged_attention.h); false, or KVSCOPE_Q8_ACTIVATIONS=0: float
  // activations and llama.cpp's fp16 attention order, the exact reference path.
  bool q8_activations = true;
  // CPU, with q8_activations: the output projection's input in two planes of 8-bit codes
  // (CpuBackendOptions::two_plane_output); false: one, as llama.cpp.
  bool two_plane_output = true;
  // CPU, debug: the residual stream after every layer (CpuBackendOptions::layer_output).
  std::function<void(std::int64_t layer, std::span<const float> x)> cpu_layer_output;
  KvDtype k_dtype = KvDtype::F16;
  KvDtype v_dtype = KvDtype::F16;
  std::vector<LayerGroupConfig> layer_groups;  // empty: one group, all layers, k/v dtype above
  std::int64_t block_size = 16;
  // Quantized layer groups: a query reads the newest kv_exact_tail_blocks blocks of its
  // sequence from fp16 copies (kv/exact_tail.h; 0: off). -1: kDefaultExactTailBlocks
  // (plan/exact_tail_rule.h) on the CPU backend, off on CUDA, whose fast decode kernel does
  // not read the copies (asked for, CUDA reads them through its generic kernel). What it buys
  // is measured in the README's KV cache table.
  std::int64_t kv_exact_tail_blocks = -1;
  std::int64_t context_length = 0;  // 0: the model's, at most kDefaultMaxContext
  // KV pool size. kv_budget_bytes > 0 sets it directly; else memory_budget_bytes (a device
  // size, e.g. a simulated 16 GB GPU on the CPU) minus weights and workspace; else, on a
  // GPU, the device's memory x utilisation minus what other programs use, weights and
  // workspace (at most scheduler.max_running full contexts); else (the CPU) room for
  // default_sequences full contexts. With memory_budget_bytes the pool is exactly the one
  // plan_memory() (plan/memory_model.h) gives for batch 1, prefill_chunk =
  // scheduler.max_batch_tokens and this backend, so a sequence reaches exactly the
  // planner's max context; each further sequence decoded at once takes vocab x 4 bytes of
  // logits that this plan does not hold back.
  std::uint64_t kv_budget_bytes = 0;
  std::uint64_t memory_budget_bytes = 0;
  double memory_utilisation = 0.9;  // fraction of memory_budget_bytes the engine may use
  // Full contexts the CPU's pool holds without a budget; also the sequences a sliding-window
  // group's pool is sized for at its cap (kv/kv_cache_config.h: window_sequences).
  std::int64_t default_sequences = 4;
  SchedulerOptions scheduler;
  // Polled while the engine is built (after the model file is read, between the layers the
  // CPU backend re-lays); true makes the constructor throw CancelledError. The app sets it so
  // quitting, or opening another model, does not wait for a multi-GB load to finish.
  std::function<bool()> cancel_load;

  static constexpr std::int64_t kDefaultMaxContext = 8192;
  static constexpr std::int64_t kAllGpuLayers = -1;
  static constexpr std::int64_t kAutoGpuLayers = -2;
};

struct PlanCheck;

class Engine {
 public:
  // Loads the model file or folder and sets everything up. Throws ModelError for a bad
  // file, UsageError for bad options, CapacityError when the KV cache cannot hold a block.
  Engine(const std::string& model_path, EngineOptions options);
  // Uses an already loaded model.
  Engine(std::unique_ptr<Model> model, EngineOptions options);
  ~Engine();

  const Model& model() const { return *model_; }
  const ModelSpec& spec() const { return model_->spec(); }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  // The same tokenizer, for other threads (its methods are const and keep no state): it
  // outlives this engine while they hold it (serve tokenizes on its HTTP threads).
  std::shared_ptr<const Tokenizer> shared_tokenizer() const { return tokenizer_; }
  const Backend& backend() const { return *backend_; }
  const EngineOptions& options() const { return options_; }
  std::int64_t context_length() const { return kv_->config().max_context; }
  // What a request that names no sampling value samples with: KVScope's defaults with the
  // model's generation_config.json values over them (run/model_sampling.h).
  SamplingParams default_sampling() const;
  // Why the requested backend was not used ("" when it was).
  const std::string& backend_note() const { return backend_note_; }

  TemplateFamily template_family() const { return template_family_; }
  // The format chats are rendered in: the template's family, or Plain for a base model.
  TemplateFamily chat_family() const;
  // Ids of plain text. BOS is prepended when `add_bos` and the model's metadata asks for it
  // (tokenizer.ggml.add_bos_token; SmolLM2 and Qwen say no), as llama.cpp does.
  std::vector<TokenId> tokenize(std::string_view text, bool add_bos) const;
  std::vector<TokenId> tokenize_chat(const std::vector<ChatMessage>& messages) const;
  // The end-of-turn strings of chat_family() (for stop_strings).
  std::vector<std::string> chat_stop_strings() const;

  RequestId submit(GenerationRequest request, RequestCallbacks callbacks = {});
  RequestId fork(RequestId parent, RequestCallbacks callbacks = {});
  void cancel(RequestId id) { scheduler_->cancel(id); }
  // Lets go of the prefix an ended keep_cache request left in the cache (or of all).
  void release_cache(RequestId id) { scheduler_->release_cache(id); }
  void release_all_caches() { scheduler_->release_all_caches(); }
  bool step() { return scheduler_->step(); }
  bool idle() const { return scheduler_->idle(); }
  // submit + run until it finishes (other queued requests run too).
  RequestResult generate(GenerationRequest request,
                         std::function<void(const TokenEvent&)> on_token = {});

  // Logits [n_tokens][vocab] of a whole text run through a fresh sequence (perplexity).
  // Throws UsageError for an id outside the tokenizer's vocab or the model's rows.
  std::vector<float> evaluate(const std::vector<TokenId>& tokens);

  const Scheduler& scheduler() const { return *scheduler_; }
  const KvCacheManager& kv_cache() const { return *kv_; }
  // What the live panel watches: measured quantization error per layer, and snapshots.
  const KvCacheObserver& kv_observer() const { return *kv_observer_; }
  CacheSnapshot snapshot() const { return kv_observer_->snapshot(*kv_); }
  MemoryInfo memory_info() const { return backend_->memory_info(*kv_); }
  // Layers on the GPU when the model is split between GPU and CPU (run/split_backend.h); 0
  // without a split (all on one backend).
  std::int64_t split_gpu_layers() const;
  // Each side's layers and memory of a split; nullopt without one.
  std::optional<SplitMemory> split_memory() const;

 private:
  friend PlanCheck check_plan(Engine& engine);  // grows a test sequence in kv_
  void init();
  std::unique_ptr<Backend> make_backend();
  KvCacheConfig make_kv_config() const;
  std::unique_ptr<CpuBackend> make_cpu_backend(LayerRange layers) const;
  void set_exact_tail(KvCacheConfig& c) const;
  void size_split_pools(KvCacheConfig& c, std::int64_t gpu_layers) const;
  std::int64_t kv_budget_within(const MemoryBudget& budget, const KvCacheConfig& c) const;

  EngineOptions options_;
  std::unique_ptr<Model> model_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  std::unique_ptr<Backend> backend_;
  const SplitBackend* split_ = nullptr;           // backend_ when it is a split, else null
  std::unique_ptr<KvCacheObserver> kv_observer_;  // attached to kv_, and outlives it
  std::unique_ptr<KvCacheManager> kv_;
  std::unique_ptr<Scheduler> scheduler_;
  TemplateFamily template_family_ = TemplateFamily::None;
  std::string backend_note_;
  SeqId next_eval_seq_ = -1;  // evaluate() uses negative ids, never the scheduler's
};

}  // namespace kvscope
