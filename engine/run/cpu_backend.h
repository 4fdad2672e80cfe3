// The CPU backend: the reference decoder and the fallback for machines without an NVIDIA
// GPU. It multiplies straight from the model's stored rows (mmap'd, any supported tensor
// type) and keeps the KV cache in host memory, in the blocks the KvCacheManager assigns.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cpu/attention/paged_attention.h"
#include "cpu/matmul.h"
#include "cpu/rope.h"
#include "cpu/thread_pool.h"
#include "model/model.h"
#include "run/backend.h"

namespace kvscope {

struct CpuBackendOptions {
  int n_threads = 0;                // 0: ThreadPool::default_threads()
  std::int64_t context_length = 0;  // the context the engine runs at (RoPE scaling)
  std::uint64_t memory_total = 0;   // simulated device size for memory_info (0: host RAM)
  // Activations encoded for each weight type, as llama.cpp does (8-bit codes for quantized
  // weights, fp16/bf16 for F16/BF16): logits move by the codes' rounding; attention over an
  // fp16 cache in float SIMD (AttentionMath::Float). false (or KVSCOPE_Q8_ACTIVATIONS=0):
  // float activations for every type and llama.cpp's fp16 attention order, the exact
  // reference path.
  bool q8_activations = true;
  // With q8_activations: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q4_K matrices are copied once, at
  // construction, into 8-row groups (cpu/quant_dot/interleaved.h), which the dot products
  // read with one SIMD load per 8 rows; the copy is as large as those weights (Q4_K's 3%
  // larger), whose mapped pages are then given back to the OS. false, or
  // KVSCOPE_CPU_INTERLEAVE=0: the rows are read where the file maps them.
  bool interleave_weights = true;
  // llama.cpp evaluates a prompt of 2+ tokens as one batch, whose projections sum in another
  // order than a decode step's (ggml_compat.h). On: a chunk that starts inside such a prompt
  // (SequenceChunk::n_prompt; a recompute after preemption included) sums in that batch
  // order whatever the chunking, so a prefill gives llama.cpp's bits. Off: every row sums as
  // a decode step does.
  bool llama_cpp_batch_order = true;
  // With q8_activations: the output projection reads its input in two planes of 8-bit codes
  // (Matmul::project_two_planes), which removes the codes' share of the logits' error (about
  // a sixth of the KL to the fp64 truth on SmolLM2, README "Against the truth") for twice the
  // multiply-adds of that one projection. false: one plane, as llama.cpp.
  bool two_plane_output = true;
  // The layers this backend runs (backend.h); a part that does not end the model leaves the
  // output head alone, and only the whole model's backend embeds in forward() (a split's CPU
  // side embeds for the GPU through embed_tokens).
  LayerRange layers;
  // Debug: called after every layer with the residual stream x, [n_tokens][dim], of the step
  // (kvscope-cli logprobs --dump-layers).
  std::function<void(std::int64_t layer, std::span<const float> x)> layer_output;
  // Polled between layers while the weights are re-laid; true: the constructor throws
  // CancelledError.
  std::function<bool()> cancelled;
};

class CpuBackend final : public Backend {
 public:
  CpuBackend(const Model& model, const CpuBackendOptions& options);

  std::string name() const override;
  void forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
               std::vector<float>& logits) override;
  LayerRange layer_range() const override { return {first_layer_, end_layer_}; }
  void forward_layers(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                      std::vector<float>& hidden, std::vector<float>& logits) override;
  bool uses_host_kv_storage() const override { return true; }
  MemoryInfo memory_info(const KvCacheManager& kv) const override;

  // hidden [n_tokens][dim] = the chunks' token embeddings (scaled as the model says): what
  // enters layer 0. A split model's first part takes it from here (the table stays in host
  // memory, read a few rows a step).
  void embed_tokens(std::span<const SequenceChunk> chunks, std::vector<float>& hidden) const;

  int n_threads() const { return pool_.size(); }
  // What the projections run with: "AVX-512 VNNI kernels, 8-bit activations", ...
  std::string kernels() const;

 private:
  // Activations of one step, sized for the step's token count.
  struct Scratch {
    std::vector<float> x;                   // [T][dim]     residual stream
    std::vector<float> xb;                  // [T][dim]     normalised input of a sub-layer
    std::vector<float> q;                   // [T][q_dim]
    std::vector<float> k;                   // [T][kv_dim]
    std::vector<float> v;                   // [T][kv_dim]
    std::vector<float> att;                 // [T][q_dim]   attention output before wo
    std::vector<float> proj;                // [T][dim]     output of wo / w_down
    std::vector<float> gate;                // [T][ffn_dim]
    std::vector<float> up;                  // [T][ffn_dim]
    std::vector<float> rope_cos, rope_sin;  // [T][rope_dim / 2]
    std::vector<float> last;                // [rows][dim]  final hidden states that need logits
    std::vector<std::uint8_t> sgemm;        // [T] 1: prompt-batch summation order (matvec)
    std::vector<std::uint8_t> sgemm_out;    // [T] the same for the last FFN and the logits
    std::vector<std::int64_t> pos;          // [T]          each token's position
    void resize(const ModelSpec& spec, std::int64_t n_tokens);
    std::uint64_t bytes() const;
  };

  // Float on the fast path, llama.cpp's order on the exact reference path (q8_activations).
  AttentionMath attention_math() const {
    return matmul_.quantized_activations() ? AttentionMath::Float : AttentionMath::GgmlOrder;
  }
  // Sizes the scratch and the step's per-token tables; returns the step's token count.
  std::int64_t begin_step(std::span<const SequenceChunk> chunks);
  void embed_rows(std::span<const SequenceChunk> chunks, float* x) const;  // x [T][dim]
  void run_layers(std::span<const SequenceChunk> chunks, std::int64_t n_tokens, KvCacheManager& kv);
  bool ends_model() const { return end_layer_ == spec_.n_layers; }
  void attention_block(std::int64_t layer, std::span<const SequenceChunk> chunks,
                       std::int64_t n_tokens, KvCacheManager& kv);
  void ffn_block(std::int64_t layer, std::int64_t n_tokens);
  void norm_rows(const WeightView& weight, float eps, std::int64_t n_tokens);
  void norm_heads(const LayerWeights& w, float eps, std::int64_t n_tokens);
  void norm_output(const WeightView& weight, float eps, std::int64_t n_tokens);
  const Rope& rope_of(std::int64_t layer) const;
  float query_scale() const;
  void compute_logits(std::span<const SequenceChunk> chunks, std::vector<float>& logits);

  // The 8-row-group copies of one layer's projections (nullptr: read in place).
  struct GroupedLayer {
    std::unique_ptr<InterleavedMatrix> wq, wk, wv, wo, w_gate, w_up, w_down;
  };
  void interleave_weights(const std::function<bool()>& cancelled);

  const Model& model_;
  const ModelSpec& spec_;
  std::int64_t first_layer_ = 0;  // the layers run: [first_layer_, end_layer_)
  std::int64_t end_layer_ = 0;
  ThreadPool pool_;
  Matmul matmul_;
  Rope rope_;
  std::optional<Rope> rope_local_;  // the sliding layers' (nullopt: rope_ serves every layer)
  std::uint64_t memory_total_;
  bool llama_cpp_batch_order_;
  bool two_plane_output_;
  std::function<void(std::int64_t, std::span<const float>)> layer_output_;
  Scratch scratch_;
  std::vector<GroupedLayer> grouped_;  // [n_layers] (empty: none; a part's others are null)
  std::unique_ptr<InterleavedMatrix> grouped_output_;
  std::uint64_t grouped_padding_bytes_ = 0;  // rows added to fill the last groups
};

}  // namespace kvscope
