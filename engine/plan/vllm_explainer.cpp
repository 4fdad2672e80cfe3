#include "plan/vllm_explainer.h"

#include <fmt/format.h>

#include "plan/units.h"

namespace kvscope {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(std::int64_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / kGiB);
}

std::string billions(std::int64_t n) {
  return fmt::format("{:.2f} B", static_cast<double>(n) / 1e9);
}

// "term        what it is made of ... = value"
std::string term(std::string_view name, const std::string& how, std::int64_t bytes) {
  return fmt::format("  {:<11} {} = {}\n", name, how, gib(bytes));
}

std::string activation_lines(const VllmMemoryPlan& p) {
  const VllmActivation& a = p.activation;
  const VllmRequest& r = p.request;
  const VllmVersionInfo& v = vllm_version_info(r.version);
  std::string out = term(
      "activation",
      fmt::format("peak of the profiling run over {} tokens in {} sequences{}",
                  group_digits(a.tokens), group_digits(a.sequences),
                  v.engine == VllmEngine::V0 && *r.chunked_prefill ? " (chunked prefill)" : ""),
      a.peak_bytes);
  const std::string ffn =
      p.request.moe.n_experts > 0
          ? fmt::format("top-{} of {} experts", r.moe.n_experts_active, r.moe.n_experts)
          : fmt::format("3 x {} ffn / TP + 3 x {} dim", r.spec.ffn_dim, r.spec.dim);
  out += fmt::format("    mlp       {} tokens x ({}) x 2 B = {}\n", group_digits(a.tokens), ffn,
                     gib(a.mlp_bytes));
  out += fmt::format("    attention {} tokens x (2 q + 2 kv + 3 dim) x 2 B = {}\n",
                     group_digits(a.tokens), gib(a.attention_bytes));
  out += fmt::format(
      "    sampler   {} x {} seqs x {} vocab x 4 B (fp32 logits, {}) + hidden states = {}\n",
      v.sampler_units, group_digits(a.sequences), group_digits(r.spec.vocab_size),
      v.engine == VllmEngine::V0 ? "sorted for top-k/top-p" : "drawn without a sort",
      gib(a.sampler_bytes));
  return out;
}

}  // namespace

std::string explain_vllm_memory(const VllmMemoryPlan& p) {
  const VllmRequest& r = p.request;
  const VllmVersionInfo& v = vllm_version_info(r.version);
  std::string out = fmt::format("{}, per GPU (TP {}, PP {}): {} as CUDA reports it\n", v.label,
                                r.tp, r.pp, gib(r.total_gpu_memory));
  out +=
      term("budget", fmt::format("{:.2f} x {}", r.gpu_memory_utilization, gib(r.total_gpu_memory)),
           p.budget_bytes);
  out += term("weights",
              fmt::format("{} linear params x {:.4g} B ({}) + {} x 2 B (embeddings, head, "
                          "norms) + rope cache {}",
                          billions(p.weights.linear_params), vllm_weight_format_bytes(r.weights),
                          vllm_weight_format_name(r.weights), billions(p.weights.bf16_params),
                          gib(p.weights.rope_cache_bytes)),
              p.weights.bytes);
  out += term("non-torch",
              r.non_torch_bytes ? std::string("as given")
                                : std::string("CUDA/cuBLAS/NCCL, measured for this release"),
              p.non_torch_bytes);
  out += activation_lines(p);
  if (r.kv_cache_memory) {
    out += term("KV cache", "--kv-cache-memory", p.kv_bytes);
  } else {
    out += term("KV cache",
                fmt::format("{} - {} - {} - {}", gib(p.budget_bytes), gib(p.weights.bytes),
                            gib(p.non_torch_bytes), gib(p.activation.peak_bytes)),
                p.kv_bytes);
  }
  out += fmt::format("  {:<11} {} tokens x {} layers x 2 x {} KV heads x {} x {} B = {} KiB\n",
                     "block", r.block_size, p.layers_per_gpu, p.kv_heads_per_gpu, r.spec.head_dim,
                     serving_kv_element_bytes(r.kv_dtype), group_digits(p.block_bytes / 1024));
  out += fmt::format("  {:<11} floor(KV / block) = {} -> {} tokens\n", "GPU blocks",
                     group_digits(p.gpu_blocks), group_digits(p.kv_tokens));
  out += "  CUDA graphs are captured after the pool, outside this budget\n";
  return out;
}

std::string vllm_verdict(const VllmMemoryPlan& p) {
  if (!p.starts) return "does not start: " + p.refusal;
  return fmt::format(
      "KV cache {} tokens ({} blocks of {}); maximum concurrency for {} tokens per request: "
      "{:.2f}x",
      group_digits(p.kv_tokens), group_digits(p.gpu_blocks), p.request.block_size,
      group_digits(p.request.max_model_len), p.max_concurrency);
}

std::string explain_vllm_concurrency(const VllmConcurrency& c) {
  const VllmRequest& r = c.request;
  std::string out = fmt::format(
      "{} requests of {} tokens need {} tokens of KV ({}) and {:.1f}% of the GPU\n", c.concurrency,
      group_digits(c.plan.request.max_model_len), group_digits(c.kv_tokens_needed),
      gib(c.kv_bytes_needed), 100.0 * c.utilisation_needed);
  if (!c.possible) {
    out += fmt::format(
        "  not on this GPU: more than {:.0f}% of it; add GPUs (TP) or shorten the "
        "context\n",
        100.0 * kMaxUtilisation);
  }
  out += fmt::format("  --max-num-seqs {}\n", r.max_num_seqs);
  out += fmt::format(
      "  --max-num-batched-tokens {}{}\n", r.max_num_batched_tokens,
      r.chunked_prefill.value_or(false) && vllm_version_info(r.version).engine == VllmEngine::V0
          ? " --enable-chunked-prefill"
          : "");
  out += fmt::format("  --gpu-memory-utilization {:.2f}\n", r.gpu_memory_utilization);
  if (c.kv_cache_memory) {
    out += fmt::format("  or --kv-cache-memory {} (the pool itself, {})\n", *c.kv_cache_memory,
                       gib(*c.kv_cache_memory));
  }
  return out;
}

}  // namespace kvscope
