// The GPU's part of a model split with the CPU (run/split_backend.h): a CudaBackend for
// layers [first_layer, end_layer) that are not the whole model. Its weights are those layers
// only (device_weights.h); the step's residual stream x [T][dim] f32 crosses from the host
// before the launches and back after them, and a part before the model's end plans its steps
// without logits rows (step_plan.h), so it holds no logits, final hidden states or picks.
#include "backend/cuda_backend.h"
#include "backend/cuda_backend_state.h"
#include "backend/cuda_check.h"
#include "util/error.h"

namespace kvscope {

void check_layer_range(const Model& model, const LayerRange& r) {
  const std::int64_t n = model.spec().n_layers;
  if (r.begin < 0 || r.begin >= r.end_in(n) || r.end_in(n) > n) {
    throw_error<UsageError>("CUDA backend: layers [{}, {}) outside the model's [0, {})", r.begin,
                            r.end_in(n), n);
  }
}

LayerRange CudaBackend::layer_range() const {
  return {s_->first_layer, s_->end_layer};
}

// The whole model embeds tokens; a part takes the residual stream the part before it left.
void CudaBackend::State::check_step_input(bool has_hidden) const {
  if (whole == has_hidden) {
    throw_error<UsageError>(
        "CUDA backend for layers [{}, {}) of {}: {}", first_layer, end_layer, spec.n_layers,
        whole ? "the whole model takes tokens (forward), not a hidden state"
              : "a part of the model takes a hidden state (forward_layers), not tokens");
  }
}

// hidden [n_tokens][dim] f32 into x, on the step's stream ahead of its launches.
void CudaBackend::State::upload_hidden(const std::vector<float>& hidden, std::int64_t n_tokens) {
  const std::size_t bytes = static_cast<std::size_t>(n_tokens * spec.dim) * sizeof(float);
  if (hidden.size() * sizeof(float) != bytes) {
    throw_error<UsageError>("CUDA backend: a hidden state of {} floats for {} tokens of width {}",
                            hidden.size(), n_tokens, spec.dim);
  }
  KVSCOPE_CUDA_CHECK(
      cudaMemcpyAsync(x.get(), hidden.data(), bytes, cudaMemcpyHostToDevice, stream));
}

// The GPU's part of a split step: the residual stream in, this part's layers, the stream out
// (or the logits, when the part ends the model).
void CudaBackend::forward_layers(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                                 std::vector<float>& hidden, std::vector<float>& logits) {
  State& s = *s_;
  s.health.run(
      [&] {
        const State::StepShape step = s.run_step(chunks, kv, &hidden);
        if (step.n_tokens == 0) {
          logits.clear();
          return;
        }
        if (s.ends_model()) {
          logits.resize(static_cast<std::size_t>(step.n_rows * s.spec.vocab_size));
          KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(logits.data(), s.logits.get(),
                                             logits.size() * sizeof(float), cudaMemcpyDeviceToHost,
                                             s.stream));
        } else {
          KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(hidden.data(), s.x.get(),
                                             hidden.size() * sizeof(float), cudaMemcpyDeviceToHost,
                                             s.stream));
        }
        s.finish_step(step.n_tokens, kv);
      },
      cuda::last_launch);
}

}  // namespace kvscope
