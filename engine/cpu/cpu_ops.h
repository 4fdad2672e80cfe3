// The CPU decoder's numeric building blocks, on plain float buffers. They are the reference
// every CUDA kernel is tested against, so each one does the same arithmetic as llama.cpp's
// ggml CPU op (same accumulator width, same order of scaling) and says so. Every function
// checks that the buffer sizes agree with the shapes (UsageError naming both numbers);
// none keeps state between calls.
#pragma once

#include <cstdint>
#include <span>

#include "model/model.h"

namespace kvscope {

class ThreadPool;

// --- Normalisation ---------------------------------------------------------------------

// out[r][i] = x[r][i] / sqrt(mean_i(x[r][i]^2) + eps) * weight[i] for every row r, as
// ggml_rms_norm + ggml_mul: squares summed in double, scale = 1/sqrtf(mean + eps) in float.
// x, out: [n_rows][n]; weight: [n]. out may alias x.
void rmsnorm(std::span<const float> x, std::span<const float> weight, float eps,
             std::span<float> out);
// The same with the weight stored in the model (F32, F16 or BF16; a norm weight is 1 x n
// or n x 1).
void rmsnorm(std::span<const float> x, const WeightView& weight, float eps, std::span<float> out);

// --- Projections -----------------------------------------------------------------------

// y[t][r] = sum_c W[r][c] * x[t][c] for n_tokens input vectors (y = x W^T, W as stored:
// W.rows outputs of W.cols inputs). Rows are split over the pool; for n_tokens > 1 the token
// loop runs inside the row loop so each stored row is read from memory once per batch,
// which is what makes a prompt batch cheaper per token than decode.
// x: [n_tokens][W.cols]; y: [n_tokens][W.rows]; y must not alias x.
// For F32 weights every dot product is summed in llama.cpp's order (ggml_compat.h): as its
// prompt-batch sgemm for the tokens whose `sgemm[t]` is set (when the shape allows it), as
// ggml_vec_dot_f32 for the others (decoding). Empty `sgemm`: every token decodes.
void matvec(ThreadPool& pool, const WeightView& w, std::span<const float> x, std::span<float> y,
            std::span<const std::uint8_t> sgemm = {});

// y[t][i] += bias[i]. y: [n_tokens][n]; bias: [n].
void add_bias(std::span<float> y, std::span<const float> bias);
// The same with an F32 bias tensor from the model (qwen2's Q/K/V biases).
void add_bias(std::span<float> y, const WeightView& bias);

// --- Element-wise ----------------------------------------------------------------------

// x / (1 + e^-x), as ggml_silu_f32.
float silu(float x);
// out[i] = silu(gate[i]) * up[i] (the SwiGLU feed-forward gate). out may alias gate or up.
void swiglu(std::span<const float> gate, std::span<const float> up, std::span<float> out);
// x[i] += y[i] (the residual connection).
void add_in_place(std::span<float> x, std::span<const float> y);
// x[i] = cap * tanh(x[i] / cap) (Gemma 2's logit soft-cap), as llama.cpp's ggml_scale by
// 1/cap, ggml_tanh, ggml_scale by cap: the reciprocal in float, each step rounded. cap > 0.
void soft_cap(std::span<float> x, float cap);

// --- Probabilities ---------------------------------------------------------------------

// x = softmax(x) in place, as ggml_soft_max_f32: subtract the max, e^ in float, sum in double,
// multiply by the float of 1/sum. -inf entries become 0; all -inf gives all 0.
void softmax(std::span<float> x);
// out[i] = log softmax(x)[i] = x[i] - max - log(sum_j e^(x[j] - max)), the sum in double.
// For top-logprobs. out may alias x.
void log_softmax(std::span<const float> x, std::span<float> out);

}  // namespace kvscope
