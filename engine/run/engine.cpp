#include "run/engine.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "plan/memory_model.h"
#include "plan/model_layer_groups.h"
#include "run/cpu_backend.h"
#include "run/kv_host_fit.h"
#include "run/layer_split.h"
#include "run/model_sampling.h"
#include "run/split_backend.h"
#include "util/error.h"
#include "util/host_memory.h"

namespace kvscope {

Engine::Engine(const std::string& model_path, EngineOptions options)
    : options_(std::move(options)), model_(load_model(model_path)) {
  init();
}

Engine::Engine(std::unique_ptr<Model> model, EngineOptions options)
    : options_(std::move(options)), model_(std::move(model)) {
  if (!model_) throw_error<UsageError>("Engine: no model given");
  init();
}

Engine::~Engine() = default;

namespace {

void check_cancel(const EngineOptions& o) {
  if (o.cancel_load && o.cancel_load()) throw CancelledError("loading the model was cancelled");
}

}  // namespace

BackendChoice parse_backend_choice(std::string_view name) {
  if (name == "auto") return BackendChoice::Auto;
  if (name == "cpu") return BackendChoice::Cpu;
  if (name == "cuda") return BackendChoice::Cuda;
  throw_error<UsageError>("unknown backend '{}' (expected auto, cpu or cuda)", name);
}

void Engine::init() {
  check_cancel(options_);
  const ModelSpec& spec = model_->spec();
  if (options_.context_length < 0) {
    throw_error<UsageError>("context length {} is negative", options_.context_length);
  }
  if (options_.context_length == 0) {
    options_.context_length = std::min(spec.context_length, EngineOptions::kDefaultMaxContext);
  }
  tokenizer_ = make_tokenizer(*model_);
  template_family_ = detect_template(model_->chat_template());
  check_cancel(options_);
  backend_ = make_backend();
  check_cancel(options_);
  KvCacheConfig kv_config = make_kv_config();
  // Refused before the manager allocates anything (its bookkeeping alone can take GBs).
  check_engine_fits_host(kv_config, *model_, options_, split_gpu_layers(), host_memory_bytes());
  kv_ = std::make_unique<KvCacheManager>(std::move(kv_config));
  kv_observer_ = std::make_unique<KvCacheObserver>(kv_->config());
  kv_->set_observer(kv_observer_.get());
  scheduler_ = std::make_unique<Scheduler>(*backend_, *kv_, *tokenizer_, options_.scheduler,
                                           spec.vocab_size);
}

std::unique_ptr<Backend> Engine::make_backend() {
  const BackendChoice kind = options_.backend;
  const std::int64_t n_layers = model_->spec().n_layers;
  if (options_.gpu_layers < EngineOptions::kAutoGpuLayers) {
    throw_error<UsageError>("{} layers on the GPU (a count, -1: all, -2: auto)",
                            options_.gpu_layers);
  }
  if (kind != BackendChoice::Cpu && options_.gpu_layers == 0) {
    backend_note_ = "0 layers on the GPU: the CPU runs them all";
  } else if (kind != BackendChoice::Cpu) {
    std::string why = "this build has no CUDA backend (no CUDA toolkit at build time)";
    if (options_.cuda_factory) {
      if (auto backend = options_.cuda_factory(*model_, options_, &why)) {
        const LayerRange gpu = backend->layer_range();
        if (gpu.whole(n_layers)) return backend;
        // The factory built the GPU's part (gpu_layers): the CPU runs the rest.
        if (options_.gpu_layers == EngineOptions::kAllGpuLayers) {
          backend_note_ = fmt::format(
              "the whole model does not fit the GPU: {} of {} layers on it, the rest on the CPU "
              "(--gpu-layers sets the count)",
              gpu.end_in(n_layers), n_layers);
        }
        auto split = std::make_unique<SplitBackend>(std::move(backend),
                                                    make_cpu_backend({gpu.end_in(n_layers), -1}));
        split_ = split.get();
        return split;
      }
    }
    if (kind == BackendChoice::Cuda) throw_error<UsageError>("CUDA backend unavailable: {}", why);
    backend_note_ = "CUDA unavailable: " + why + "; using the CPU";
  }
  return make_cpu_backend({});
}

std::unique_ptr<CpuBackend> Engine::make_cpu_backend(LayerRange layers) const {
  CpuBackendOptions cpu;
  cpu.n_threads = options_.n_threads;
  cpu.context_length = options_.context_length;
  cpu.memory_total = options_.memory_budget_bytes;
  cpu.q8_activations = options_.q8_activations;
  cpu.two_plane_output = options_.two_plane_output;
  cpu.layer_output = options_.cpu_layer_output;
  cpu.cancelled = options_.cancel_load;
  cpu.layers = layers;
  return std::make_unique<CpuBackend>(*model_, cpu);
}

KvCacheConfig Engine::make_kv_config() const {
  if (options_.block_size < 1) {
    throw_error<UsageError>("block size {} must be at least 1", options_.block_size);
  }
  const ModelSpec& spec = model_->spec();
  KvCacheConfig c;
  c.groups = options_.layer_groups;
  // Custom groups may give layers other windows than the model's (the built-in demo model
  // teaches windows that way); by default the groups are the model's own.
  if (c.groups.empty()) c.groups = model_layer_groups(spec, options_.k_dtype, options_.v_dtype);
  c.n_kv_heads = spec.n_kv_heads;
  c.head_dim = spec.head_dim;
  c.block_size = options_.block_size;
  c.max_context = options_.context_length;
  c.host_storage = backend_->uses_host_kv_storage();
  if (split_) c.groups = split_layer_groups(c.groups, split_->gpu_layers());
  // Sliding-window pools hold default_sequences sequences at their cap (kv_cache_config.h);
  // every grow is at most one prefill chunk.
  c.window_sequences =
      std::clamp<std::int64_t>(options_.default_sequences, 1, options_.scheduler.max_running);
  c.max_grow_tokens = options_.scheduler.max_batch_tokens;
  const std::int64_t blocks_per_context = (c.max_context + c.block_size - 1) / c.block_size;

  if (options_.kv_budget_bytes > 0) {
    c.budget_bytes = static_cast<std::int64_t>(options_.kv_budget_bytes);
    set_exact_tail(c);
    return c;
  }
  if (split_) {
    size_split_pools(c, split_->gpu_layers());
    return c;
  }
  if (options_.memory_budget_bytes > 0) {
    // A device size (a simulated GPU on the CPU): nothing used by others.
    c.budget_bytes = kv_budget_within(
        {static_cast<std::int64_t>(options_.memory_budget_bytes), options_.memory_utilisation, 0},
        c);
    set_exact_tail(c);
    return c;
  }
  const auto device = backend_->device_memory();
  if (!device) {
    // The CPU with no budget: room for default_sequences full contexts.
    c.n_blocks = std::max<std::int64_t>(1, options_.default_sequences) * blocks_per_context;
    set_exact_tail(c);
    return c;
  }
  // A GPU with no budget given: the device as vLLM sizes it, what others use measured.
  c.budget_bytes =
      kv_budget_within({static_cast<std::int64_t>(device->total), options_.memory_utilisation,
                        static_cast<std::int64_t>(device->used_by_others)},
                       c);
  // A bigger pool than max_running full contexts serves no one and lengthens every snapshot:
  // cap it there (by block count, the allocator's other way to be sized). The exact tail's
  // copies are taken from the budget first, so the capped pool and the copies stay within it.
  set_exact_tail(c);
  const std::int64_t cap = options_.scheduler.max_running * blocks_per_context;
  if (kv_blocks_per_group(c) > cap) {
    c.budget_bytes = 0;
    c.n_blocks = cap;
    c.exact_tail_shadows = std::min(c.exact_tail_shadows, cap);  // one copy a block at most
  }
  return c;
}

// A split's pools (split_backend.h): every group gets the blocks the GPU's groups fit in the
// GPU's budget (run/layer_split.h), so a sequence reaches the same length on both sides; the
// CPU's groups take that many blocks of RAM (split_pool_blocks: at most scheduler.max_running
// full contexts without a memory budget, as on the GPU alone); kv_budget_bytes, when given, is
// shared by all groups as without a split.
void Engine::size_split_pools(KvCacheConfig& c, std::int64_t gpu_layers) const {
  set_exact_tail(c);
  if (options_.kv_budget_bytes > 0) {
    c.budget_bytes = static_cast<std::int64_t>(options_.kv_budget_bytes);
    return;
  }
  const DeviceMemory device = backend_->device_memory().value_or(DeviceMemory{});
  const MemoryBudget budget = gpu_memory_budget(options_, device.total, device.used_by_others);
  const std::int64_t kv_budget =
      gpu_side_kv_budget(*model_, options_, budget, gpu_layers,
                         backend_->cuda_plan_options().value_or(CudaWorkspaceOptions{}));
  if (kv_budget <= 0) {
    throw_error<CapacityError>(
        "{} layers on the GPU leave nothing for their KV cache in a budget of {} bytes ({} of "
        "them used by other programs): their weights take {}; put fewer layers on the GPU",
        gpu_layers, budget.total_bytes, budget.used_by_others,
        gpu_side_weight_bytes(*model_, gpu_layers));
  }
  const std::int64_t n = split_pool_blocks(gpu_side_pool_blocks(c, kv_budget), options_);
  c.budget_bytes = 0;
  c.n_blocks = n;
  c.exact_tail_shadows = std::min(c.exact_tail_shadows, n);
}

// The exact tail (kv/exact_tail.h): on by default on the CPU backend (host storage), on
// CUDA only when asked (its fast decode kernel does not read the copies), sized by the rule
// the planner uses too (plan/exact_tail_rule.h). A split follows CUDA: off unless asked.
void Engine::set_exact_tail(KvCacheConfig& c) const {
  std::int64_t tail = options_.kv_exact_tail_blocks;
  if (tail < -1) throw_error<UsageError>("exact KV tail of {} blocks (0: off, -1: default)", tail);
  if (tail == -1) tail = c.host_storage && !split_ ? kDefaultExactTailBlocks : 0;
  const std::int64_t sequences =
      std::clamp<std::int64_t>(options_.default_sequences, 1, options_.scheduler.max_running);
  apply_exact_tail(c, tail, sequences, options_.scheduler.max_batch_tokens);
}

// The planner's own arithmetic: what is left of `budget` (total x utilisation - used by
// others) after weights and workspace, for one sequence (plan_memory's default batch, what
// `kvscope-cli plan` asks) and this backend's overhead, so the planner's max context is
// exactly what the engine reaches. The CUDA workspace is the one the planner sizes for this
// backend (its cuda_plan_options) and the cache `c` (its groups, blocks and context).
std::int64_t Engine::kv_budget_within(const MemoryBudget& budget, const KvCacheConfig& c) const {
  const Workspace ws =
      workspace_for(model_->spec(), 1, options_.scheduler.max_batch_tokens,
                    backend_->uses_host_kv_storage() ? PlanBackend::Cpu : PlanBackend::Cuda, c,
                    backend_->cuda_plan_options().value_or(CudaWorkspaceOptions{}));
  const std::int64_t bytes =
      kv_budget_from(budget, static_cast<std::int64_t>(model_->weight_bytes()), ws);
  if (bytes <= 0) {
    throw_error<CapacityError>(
        "a memory budget of {} bytes ({} of them used by other programs) leaves nothing for "
        "the KV cache: the weights take {} and the workspace {} (at {:.0f}% utilisation)",
        budget.total_bytes, budget.used_by_others, model_->weight_bytes(), ws.total(),
        100.0 * budget.utilisation);
  }
  return bytes;
}

std::vector<TokenId> Engine::tokenize(std::string_view text, bool add_bos) const {
  return tokenizer_->encode(text, add_bos && tokenizer_->add_bos_default());
}

// A model without a template (a base model) chats in the Plain format.
std::int64_t Engine::split_gpu_layers() const {
  return split_ ? split_->gpu_layers() : 0;
}

std::optional<SplitMemory> Engine::split_memory() const {
  if (!split_) return std::nullopt;
  return split_->split_memory(*kv_);
}

SamplingParams Engine::default_sampling() const {
  return with_model_defaults(model_->sampling_defaults());
}

TemplateFamily Engine::chat_family() const {
  return template_family_ == TemplateFamily::None ? TemplateFamily::Plain : template_family_;
}

std::vector<TokenId> Engine::tokenize_chat(const std::vector<ChatMessage>& messages) const {
  return tokenizer_->encode_parts(render_chat(chat_family(), messages, true),
                                  tokenizer_->add_bos_default());
}

std::vector<std::string> Engine::chat_stop_strings() const {
  std::vector<std::string> out;
  for (std::string_view s : stop_strings(chat_family())) out.emplace_back(s);
  return out;
}

RequestId Engine::submit(GenerationRequest request, RequestCallbacks callbacks) {
  return scheduler_->submit(std::move(request), std::move(callbacks));
}

RequestId Engine::fork(RequestId parent, RequestCallbacks callbacks) {
  return scheduler_->fork(parent, std::move(callbacks));
}

RequestResult Engine::generate(GenerationRequest request,
                               std::function<void(const TokenEvent&)> on_token) {
  RequestResult result;
  bool done = false;
  RequestCallbacks cb;
  cb.on_token = std::move(on_token);
  cb.on_finish = [&](const RequestResult& r) {
    result = r;
    done = true;
  };
  submit(std::move(request), std::move(cb));
  while (!done && scheduler_->step()) {
  }
  return result;
}

std::vector<float> Engine::evaluate(const std::vector<TokenId>& tokens) {
  const auto n = static_cast<std::int64_t>(tokens.size());
  if (n == 0) throw_error<UsageError>("evaluate: no tokens");
  if (n > context_length()) {
    throw_error<CapacityError>("evaluate: {} tokens but the context holds {}", n, context_length());
  }
  // An id past the embedding rows would read outside the weights.
  const std::int64_t n_ids = std::min(tokenizer_->vocab_size(), spec().vocab_size);
  for (std::int64_t i = 0; i < n; ++i) {
    const TokenId id = tokens[static_cast<std::size_t>(i)];
    if (id < 0 || id >= n_ids) {
      throw_error<UsageError>("evaluate: token {} is id {}, outside the vocabulary [0, {})", i, id,
                              n_ids);
    }
  }
  const SeqId seq = next_eval_seq_--;
  kv_->add_sequence(seq);
  std::vector<float> all, logits;
  try {
    const std::int64_t chunk = options_.scheduler.max_batch_tokens;
    for (std::int64_t start = 0; start < n; start += chunk) {
      const std::int64_t len = std::min(chunk, n - start);
      std::vector<BlockCopy> copies;
      kv_->grow(seq, len, &copies);
      backend_->copy_blocks(copies);
      const SequenceChunk c{seq,
                            std::span<const TokenId>(tokens).subspan(
                                static_cast<std::size_t>(start), static_cast<std::size_t>(len)),
                            start, true};
      backend_->forward({&c, 1}, *kv_, logits);
      all.insert(all.end(), logits.begin(), logits.end());
    }
  } catch (...) {
    kv_->free_sequence(seq);
    throw;
  }
  kv_->free_sequence(seq);
  return all;
}

}  // namespace kvscope
