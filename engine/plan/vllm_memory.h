// vLLM's own accounting of GPU memory: the KV pool a `vllm serve` will allocate, per GPU,
// as its start-up log reports it. This is a model of vLLM, not of KVScope's engine (that is
// memory_model.h); the two differ by vLLM's profiling run. For the release differences see
// vllm_versions.h. Per GPU (TP ranks are alike; with PP the last stage, which holds the
// output head and runs the sampler):
//
//   budget      = gpu_memory_utilization x total GPU memory (CUDA's total, not free)
//   weights     = the linear layers in the checkpoint's format + embeddings and output head
//                 in bf16 + norms, biases and the rotary cos/sin cache (bf16 [context,
//                 head_dim]); heads, FFN, experts and vocabulary split over TP, KV
//                 projections replicated when TP exceeds the KV heads
//   non-torch   = the release's measured constant (vllm_versions.h), or the user's
//   activation  = the peak of the profiling forward pass over T = max_num_batched_tokens
//                 tokens in S = min(max_num_seqs, T) sequences (vllm_activation below)
//   KV bytes    = budget - weights - non-torch - activation   (or --kv-cache-memory)
//   block bytes = block_size x layers x 2 (K, V) x KV heads per GPU x head_dim x element
//   GPU blocks  = max(0, floor(KV bytes / block bytes)),  KV tokens = blocks x block_size
//
// It starts when blocks > 0 and one request of max_model_len fits: KV tokens >= max_model_len.
// CUDA graphs are captured after the pool, outside it, and are not in the budget.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/model_spec.h"
#include "plan/serving_kv_dtype.h"
#include "plan/vllm_versions.h"

namespace kvscope {

// How the checkpoint stores its linear layers, as vLLM loads them (bytes per weight):
//   bf16 / fp16  2
//   fp8          1 (per-tensor scales)
//   awq, gptq    4-bit, group 128: 0.5 + (fp16 scale + 4-bit zero) / 128 = 0.5195
//   bnb          bitsandbytes nf4, blocks of 64 with a double-quantized 8-bit absmax:
//                0.5 + 1 / 64 = 0.5156
// Embeddings, output head and norms stay bf16 in every format.
enum class VllmWeightFormat : std::uint8_t { Bf16, Fp8, Awq, Gptq, Bnb };

std::string_view vllm_weight_format_name(VllmWeightFormat format);  // "bf16", "awq", ...
double vllm_weight_format_bytes(VllmWeightFormat format);           // per weight, as above
// "bf16", "fp16", "f16", "auto", "fp8", "awq", "gptq", "bnb", "bitsandbytes"; any case.
VllmWeightFormat parse_vllm_weight_format(std::string_view text);

// A mixture-of-experts FFN (Qwen3 MoE, Mixtral); n_experts 0: the spec's dense FFN.
struct VllmMoe {
  std::int64_t n_experts = 0;
  std::int64_t n_experts_active = 0;  // top-k
  std::int64_t expert_ffn_dim = 0;    // moe_intermediate_size
};

struct VllmRequest {
  ModelSpec spec;
  VllmMoe moe;
  VllmWeightFormat weights = VllmWeightFormat::Bf16;
  VllmVersion version = kLatestVllmVersion;
  std::int64_t total_gpu_memory = 0;  // per GPU, as CUDA reports it (reported_gpu_memory)
  double gpu_memory_utilization = 0.90;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t max_model_len = 0;           // 0: the model's context length
  std::int64_t max_num_seqs = 0;            // 0: the release's default
  std::int64_t max_num_batched_tokens = 0;  // 0: the release's default
  std::optional<bool> chunked_prefill;      // V0 only; nullopt: the release's default
  ServingKvDtype kv_dtype = ServingKvDtype::Auto;
  std::int64_t block_size = 16;
  std::optional<std::int64_t> kv_cache_memory;  // --kv-cache-memory (0.11 and later)
  std::optional<std::int64_t> non_torch_bytes;  // measured on the user's machine
};

// The total CUDA reports for a GPU sold as `marketed_bytes`: the driver keeps about 0.43 GiB
// (RTX 3090: 24 GiB -> 23.58 or 23.56 GiB; H100: 81,559 MiB -> 79.22 GiB; RTX 4080:
// 15.57 GiB). Under WSL the whole memory is reported (RTX 4060: 8.00 GiB).
std::int64_t reported_gpu_memory(std::int64_t marketed_bytes);

// The request with every default filled in as the release fills it: max_model_len, then
// chunked prefill (V0: on above 32,768 tokens), max_num_batched_tokens (V0 without chunked
// prefill: max(max_model_len, 2048); V0 chunked: the release's; V1: 2048, or 8192 on a GPU of
// 70 GiB and more) and max_num_seqs (256; V1 on a GPU of 70 GiB and more: 1024).
VllmRequest resolve_vllm_request(const VllmRequest& request);

// The activation peak of vLLM's profiling run, per GPU. T tokens, S sequences, element size
// 2 (bf16), TP t; the largest of three moments, each the tensors alive at once:
//   mlp       T x (3 x ffn / t + 3 x dim) x 2: gate_up [T, 2 ffn], act [T, ffn], down's
//             output, the residual and the normed input [T, dim]; bnb adds the dequantized
//             gate_up weight (2 x ffn x dim x 2 / t) that its prefill path makes.
//             MoE: T x (top-k x (3 x expert_ffn / t + dim) + 3 x dim) x 2 + router T x E x 4.
//   attention T x (2 x q_dim / t + 2 x kv_dim_per_gpu + 3 x dim) x 2
//   sampler   units x S x vocab x 4 + T x dim x 2: the final hidden states and the fp32
//             logits of the last token of each sequence with what the sampler makes of them.
//             V0 sorts the vocabulary for top-k / top-p: bf16 logits (0.5), fp32 logits (1),
//             sorted values (1), int64 indices (2), the radix sort's alternate buffers (1 + 2)
//             and its int64 iota (2) = 9.5. V1 draws without a sort: bf16 logits (0.5), fp32
//             logits (1), probabilities (1) and the exponential noise (1) = 3.5.
struct VllmActivation {
  std::int64_t tokens = 0;     // T
  std::int64_t sequences = 0;  // S
  std::int64_t mlp_bytes = 0;
  std::int64_t attention_bytes = 0;
  std::int64_t sampler_bytes = 0;
  std::int64_t peak_bytes = 0;  // the largest of the three
};
VllmActivation vllm_activation(const VllmRequest& resolved);

// Weights per GPU as vLLM loads them (see the top of this file).
struct VllmWeights {
  std::int64_t linear_params = 0;  // per GPU, in the checkpoint's format
  std::int64_t bf16_params = 0;    // embeddings, head, norms, biases, router
  std::int64_t rope_cache_bytes = 0;
  std::int64_t bytes = 0;
};
VllmWeights vllm_weights(const VllmRequest& resolved);

struct VllmMemoryPlan {
  VllmRequest request;  // resolved
  std::int64_t layers_per_gpu = 0;
  std::int64_t kv_heads_per_gpu = 0;
  std::int64_t budget_bytes = 0;
  VllmWeights weights;
  std::int64_t non_torch_bytes = 0;
  VllmActivation activation;
  std::int64_t kv_bytes = 0;  // may be negative: vLLM logs it so, then refuses
  std::int64_t block_bytes = 0;
  std::int64_t gpu_blocks = 0;
  std::int64_t kv_tokens = 0;
  double max_concurrency = 0.0;  // kv_tokens / max_model_len, vLLM's "Maximum concurrency"
  bool starts = false;
  std::string refusal;  // vLLM's reason when it does not start
};

// UsageError for a request vLLM would refuse before profiling (no GPU memory, a
// utilisation outside (0, 1], TP that does not divide the heads, a bad block size).
VllmMemoryPlan plan_vllm_memory(const VllmRequest& request);

}  // namespace kvscope
