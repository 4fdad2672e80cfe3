// llama.cpp's CPU flash attention over an fp16 KV cache, operation for operation: the
// one-chunk kernel of ggml_compute_forward_flash_attn_ext_f16 (ggml-cpu/ops.cpp), which is
// what llama.cpp runs for a decode step and for prompt batches of fewer than 64 tokens when
// the cache holds fewer than 512 cells.
//
// Per query head, keys are visited one at a time in position order:
//   q16   = fp16(q)                                   (Q converted to K's dot type)
//   s     = float(sum_i double(k16[i] * q16[i])) * scale       (ggml_vec_dot_f16)
//   s     = softcap * tanhf(s), scale divided by softcap first (only with a soft-cap)
//   if s > M:  ms = expf(M - s), M = s, acc = fp16(acc * ms), vs = 1
//   else:      ms = 1, vs = expf(s - M)
//   acc   = fp16(fma(v16, vs, acc))                    (ggml_vec_mad_f16, accumulator fp16)
//   S     = fma(S, ms, vs)
// and at the end out = float(acc) * (1 / S). The accumulator is rounded to fp16 after
// every key, which is the largest difference to float attention (3e-3 in log-probability
// on stories260K at the first token); ggml_compat.h says why the rest must match too.
// For head_dim >= 64 the dot sums the first head_dim & ~63 products in 4 x 16 float lanes
// first, as AVX-512 ggml does.
#pragma once

#include <cstdint>

namespace kvscope {

// Running softmax state of one query head: M (largest score so far) and S (sum of
// e^(score - M)); the fp16 accumulator lives beside it in the caller's buffer.
struct GgmlFlashHead {
  float max = 0.0f;
  float sum = 0.0f;
};

// Starts one query head: q16 = fp16(q), acc = 0, M = -inf, S = 0.
// q: [head_dim]; q16, acc: [head_dim] fp16 bits.
void ggml_flash_begin(const float* q, std::int64_t head_dim, std::uint16_t* q16, std::uint16_t* acc,
                      GgmlFlashHead& state);

// Feeds n_keys keys, in order, to the n_heads query heads of one GQA group (they all read
// the same K and V, each with its own state). k, v: [n_keys][stride] fp16 bits, the first
// head_dim of each row used; q16, acc: [n_heads][head_dim]; state: [n_heads]. With a soft-cap
// (Gemma 2) each score is softcap * tanhf(dot * (scale / softcap)), as ggml's logit_softcap.
void ggml_flash_keys(const std::uint16_t* k, const std::uint16_t* v, std::int64_t stride,
                     std::int64_t n_keys, std::int64_t head_dim, float scale,
                     const std::uint16_t* q16, std::uint16_t* acc, GgmlFlashHead* state,
                     std::int64_t n_heads, float softcap = 0.0f);

// out = float(acc) * (1 / S), or 0 when no key was fed. out: [head_dim].
void ggml_flash_end(const std::uint16_t* acc, const GgmlFlashHead& state, std::int64_t head_dim,
                    float* out);

// ggml_vec_dot_f16(n, k, q) as AVX-512 ggml computes it (exposed for tests).
float ggml_dot_f16(const std::uint16_t* k, const std::uint16_t* q, std::int64_t n);

}  // namespace kvscope
