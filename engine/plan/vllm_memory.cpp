#include "plan/vllm_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "util/error.h"

namespace kvscope {

namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
// What the driver keeps of a GPU's memory on Linux (see reported_gpu_memory).
constexpr std::int64_t kDriverReserved = kGiB * 43 / 100;
// V1 picks larger defaults on GPUs of at least this much memory (H100, H200, MI300).
constexpr std::int64_t kLargeGpu = 70 * kGiB;
// V0 turns chunked prefill on by default for a max_model_len above this.
constexpr std::int64_t kV0ChunkedAbove = 32768;
// V0's profiling batch without chunked prefill is at least this many tokens.
constexpr std::int64_t kV0MinBatchTokens = 2048;
constexpr std::int64_t kActivationBytes = 2;  // bf16 / fp16 activations
constexpr std::int64_t kLogitBytes = 4;       // the sampler's fp32 logits

std::int64_t kv_heads_per_gpu(const ModelSpec& s, std::int64_t tp) {
  // vLLM splits KV heads over TP, or replicates them when TP exceeds their count (each
  // GPU keeps one head, shared by tp / n_kv_heads GPUs).
  return tp <= s.n_kv_heads ? s.n_kv_heads / tp : 1;
}

std::int64_t layers_per_gpu(const VllmRequest& r) {
  return (r.spec.n_layers + r.pp - 1) / r.pp;  // the fullest stage
}

void validate(const VllmRequest& r) {
  const ModelSpec& s = r.spec;
  if (r.total_gpu_memory <= 0) throw_error<UsageError>("vLLM plan: no GPU memory given");
  if (!(r.gpu_memory_utilization > 0.0 && r.gpu_memory_utilization <= 1.0)) {
    throw_error<UsageError>("--gpu-memory-utilization {} is outside (0, 1]",
                            r.gpu_memory_utilization);
  }
  if (r.tp < 1 || r.pp < 1) throw_error<UsageError>("TP and PP are at least 1");
  if (s.n_layers < 1 || s.n_heads < 1 || s.n_kv_heads < 1 || s.head_dim < 1 || s.dim < 1 ||
      s.vocab_size < 1) {
    throw_error<UsageError>("vLLM plan: the model's shape is incomplete");
  }
  if (s.n_heads % r.tp != 0) {
    throw_error<UsageError>("vLLM refuses TP {}: {} attention heads do not split evenly", r.tp,
                            s.n_heads);
  }
  const bool kv_ok = r.tp <= s.n_kv_heads ? s.n_kv_heads % r.tp == 0 : r.tp % s.n_kv_heads == 0;
  if (!kv_ok) {
    throw_error<UsageError>("vLLM refuses TP {}: {} KV heads neither split nor replicate evenly",
                            r.tp, s.n_kv_heads);
  }
  if (r.pp > s.n_layers) {
    throw_error<UsageError>("PP {} exceeds the model's {} layers", r.pp, s.n_layers);
  }
  if (r.block_size < 1 || r.block_size > 1024) {
    throw_error<UsageError>("--block-size {} is outside 1..1024", r.block_size);
  }
}

std::string gib(std::int64_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
}

std::string refusal(const VllmMemoryPlan& p) {
  const VllmRequest& r = p.request;
  if (p.gpu_blocks <= 0) {
    return "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
           "when initializing the engine.";
  }
  if (vllm_version_info(r.version).engine == VllmEngine::V0) {
    return fmt::format(
        "The model's max seq len ({}) is larger than the maximum number of tokens that can be "
        "stored in KV cache ({}). Try increasing `gpu_memory_utilization` or decreasing "
        "`max_model_len` when initializing the engine.",
        r.max_model_len, p.kv_tokens);
  }
  const std::int64_t need_blocks = (r.max_model_len + r.block_size - 1) / r.block_size;
  return fmt::format(
      "To serve at least one request with the models's max seq len ({}), ({} KV cache is needed, "
      "which is larger than the available KV cache memory ({}). Based on the available memory, "
      "the estimated maximum model length is {}.",
      r.max_model_len, gib(need_blocks * p.block_bytes), gib(p.kv_bytes), p.kv_tokens);
}

}  // namespace

std::string_view vllm_weight_format_name(VllmWeightFormat format) {
  switch (format) {
    case VllmWeightFormat::Bf16:
      return "bf16";
    case VllmWeightFormat::Fp8:
      return "fp8";
    case VllmWeightFormat::Awq:
      return "awq";
    case VllmWeightFormat::Gptq:
      return "gptq";
    case VllmWeightFormat::Bnb:
      return "bnb";
  }
  return "bf16";
}

double vllm_weight_format_bytes(VllmWeightFormat format) {
  switch (format) {
    case VllmWeightFormat::Bf16:
      return 2.0;
    case VllmWeightFormat::Fp8:
      return 1.0;
    case VllmWeightFormat::Awq:
    case VllmWeightFormat::Gptq:
      return 0.5 + 2.5 / 128.0;
    case VllmWeightFormat::Bnb:
      return 0.5 + 1.0 / 64.0;
  }
  return 2.0;
}

VllmWeightFormat parse_vllm_weight_format(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "bf16" || s == "fp16" || s == "f16" || s == "auto") return VllmWeightFormat::Bf16;
  if (s == "fp8") return VllmWeightFormat::Fp8;
  if (s == "awq") return VllmWeightFormat::Awq;
  if (s == "gptq") return VllmWeightFormat::Gptq;
  if (s == "bnb" || s == "bitsandbytes") return VllmWeightFormat::Bnb;
  throw_error<UsageError>(
      "unknown vLLM weight format \"{}\"; known: bf16 (fp16, auto), fp8, awq, gptq, bnb", text);
}

std::int64_t reported_gpu_memory(std::int64_t marketed_bytes) {
  return marketed_bytes > 2 * kDriverReserved ? marketed_bytes - kDriverReserved : marketed_bytes;
}

VllmRequest resolve_vllm_request(const VllmRequest& request) {
  VllmRequest r = request;
  const bool large_gpu = r.total_gpu_memory >= kLargeGpu;
  if (r.max_model_len <= 0) r.max_model_len = r.spec.context_length;
  if (vllm_version_info(r.version).engine == VllmEngine::V0) {
    if (!r.chunked_prefill) r.chunked_prefill = r.max_model_len > kV0ChunkedAbove;
    if (r.max_num_batched_tokens <= 0) {
      r.max_num_batched_tokens = *r.chunked_prefill
                                     ? vllm_version_info(r.version).v0_chunked_batch_tokens
                                     : std::max(r.max_model_len, kV0MinBatchTokens);
    }
    if (r.max_num_seqs <= 0) r.max_num_seqs = 256;
  } else {
    r.chunked_prefill = true;  // V1 always schedules chunks of max_num_batched_tokens
    if (r.max_num_batched_tokens <= 0) r.max_num_batched_tokens = large_gpu ? 8192 : 2048;
    if (r.max_num_seqs <= 0) r.max_num_seqs = large_gpu ? 1024 : 256;
  }
  return r;
}

VllmActivation vllm_activation(const VllmRequest& r) {
  const ModelSpec& s = r.spec;
  VllmActivation a;
  a.tokens = r.max_num_batched_tokens;
  a.sequences = std::min(r.max_num_seqs, a.tokens);
  const auto t = static_cast<double>(a.tokens);
  const auto tp = static_cast<double>(r.tp);
  const auto dim = static_cast<double>(s.dim);
  const auto residual = 3.0 * dim;  // the residual, the normed input and the layer's output
  double mlp = 0.0;
  if (r.moe.n_experts > 0) {
    // fused_moe's caches: [T, k, 2 N], [T k, N], [T, k, dim] with N = expert_ffn / tp
    const double n = static_cast<double>(r.moe.expert_ffn_dim) / tp;
    mlp = t * (static_cast<double>(r.moe.n_experts_active) * (3.0 * n + dim) + residual) *
              kActivationBytes +
          t * static_cast<double>(r.moe.n_experts) * 4.0;
  } else {
    mlp = t * (3.0 * static_cast<double>(s.ffn_dim) / tp + residual) * kActivationBytes;
    if (r.weights == VllmWeightFormat::Bnb) {
      mlp += 2.0 * static_cast<double>(s.ffn_dim) * dim * kActivationBytes / tp;
    }
  }
  const double q = static_cast<double>(s.n_heads * s.head_dim) / tp;
  const auto kv = static_cast<double>(kv_heads_per_gpu(s, r.tp) * s.head_dim);
  const double attention = t * (2.0 * q + 2.0 * kv + residual) * kActivationBytes;
  const double units = vllm_version_info(r.version).sampler_units;
  const double sampler =
      units * static_cast<double>(a.sequences) * static_cast<double>(s.vocab_size) * kLogitBytes +
      t * dim * kActivationBytes;
  a.mlp_bytes = std::llround(mlp);
  a.attention_bytes = std::llround(attention);
  a.sampler_bytes = std::llround(sampler);
  a.peak_bytes = std::max({a.mlp_bytes, a.attention_bytes, a.sampler_bytes});
  return a;
}

VllmWeights vllm_weights(const VllmRequest& r) {
  const ModelSpec& s = r.spec;
  const std::int64_t tp = r.tp;
  const std::int64_t layers = layers_per_gpu(r);
  const std::int64_t q_dim = s.n_heads * s.head_dim;
  const std::int64_t kv_dim = kv_heads_per_gpu(s, tp) * s.head_dim;
  // per layer: q, k, v, o projections, then the FFN (gated: gate, up, down)
  std::int64_t linear = s.dim * q_dim / tp + 2 * s.dim * kv_dim + q_dim / tp * s.dim;
  std::int64_t bf16 = 2 * s.dim;  // the two norms
  if (r.moe.n_experts > 0) {
    linear += r.moe.n_experts * 3 * s.dim * r.moe.expert_ffn_dim / tp;
    bf16 += s.dim * r.moe.n_experts;  // the router, replicated
  } else {
    linear += 3 * s.dim * s.ffn_dim / tp;
  }
  if (s.qkv_bias) bf16 += q_dim / tp + 2 * kv_dim;
  if (s.qk_norm) bf16 += 2 * s.head_dim;
  if (s.post_norms) bf16 += 2 * s.dim;
  VllmWeights w;
  w.linear_params = linear * layers;
  w.bf16_params = bf16 * layers + s.dim;                       // + the final norm
  const std::int64_t table = s.vocab_size * s.dim / tp;        // vocabulary split over TP
  if (r.pp == 1) w.bf16_params += table;                       // embeddings (first stage)
  if (!s.tied_embeddings || r.pp > 1) w.bf16_params += table;  // output head (last stage)
  const std::int64_t rotary = s.rope_dim > 0 ? s.rope_dim : s.head_dim;
  w.rope_cache_bytes = s.context_length * rotary * kActivationBytes;
  w.bytes =
      std::llround(static_cast<double>(w.linear_params) * vllm_weight_format_bytes(r.weights)) +
      w.bf16_params * 2 + w.rope_cache_bytes;
  return w;
}

VllmMemoryPlan plan_vllm_memory(const VllmRequest& request) {
  validate(request);
  VllmMemoryPlan p;
  p.request = resolve_vllm_request(request);
  const VllmRequest& r = p.request;
  const VllmVersionInfo& v = vllm_version_info(r.version);
  p.layers_per_gpu = layers_per_gpu(r);
  p.kv_heads_per_gpu = kv_heads_per_gpu(r.spec, r.tp);
  p.budget_bytes = std::llround(r.gpu_memory_utilization * static_cast<double>(r.total_gpu_memory));
  p.weights = vllm_weights(r);
  p.non_torch_bytes = r.non_torch_bytes.value_or(
      r.tp == 1 ? v.non_torch_bytes : v.non_torch_tp_bytes * (v.non_torch_per_rank ? r.tp : 1));
  p.activation = vllm_activation(r);
  p.kv_bytes = r.kv_cache_memory.value_or(p.budget_bytes - p.weights.bytes - p.non_torch_bytes -
                                          p.activation.peak_bytes);
  p.block_bytes = r.block_size * p.layers_per_gpu * 2 * p.kv_heads_per_gpu * r.spec.head_dim *
                  serving_kv_element_bytes(r.kv_dtype);
  p.gpu_blocks = p.kv_bytes > 0 ? p.kv_bytes / p.block_bytes : 0;
  p.kv_tokens = p.gpu_blocks * r.block_size;
  p.max_concurrency = r.max_model_len > 0
                          ? static_cast<double>(p.kv_tokens) / static_cast<double>(r.max_model_len)
                          : 0.0;
  p.starts = p.gpu_blocks > 0 && p.kv_tokens >= r.max_model_len;
  if (!p.starts) p.refusal = refusal(p);
  return p;
}

}  // namespace kvscope
