// llama.cpp-compatible CPU arithmetic: the exact sequence of float operations that
// llama.cpp's CPU backend (ggml-cpu, built by GCC for an x86-64 CPU with AVX-512, the build
// behind ../shared/reference) performs for a matrix product, RoPE and SwiGLU.
//
// Why bit-exact and not just "close": the KV cache stores K and V in fp16 and llama.cpp's
// flash attention accumulates V in fp16 (ggml_flash_attn.h). A one-ulp difference in a
// float result moves an fp16 rounding about once in a few thousand values, and on a small
// model (stories260K: 64-wide) each such flip moves later log-probabilities by 1e-4 to 1e-3.
// Over 64 generated tokens those flips add up to 1e-2. Measured on the reference prompts:
// every piece below is needed to stay within 1e-3 of llama.cpp; with all of them the
// top-5 log-probabilities agree to 5e-8 (float printing precision).
//
// The order of each sum is spelled out where the function is defined. Each function has an
// AVX2+FMA+F16C version (same operations, 16-lane vectors as two 8-lane halves) and a
// portable one (std::fma where ggml fuses); both give identical bits on every input, and
// ggml_compat_test.cpp checks them against values ggml itself computed. On CPUs with AVX but
// no FMA (use_avx_alone) SwiGLU and RoPE multiply and add in two roundings instead, as ggml
// built for such a CPU does: std::fma is a software call there.
#pragma once

#include <cstdint>
#include <span>

namespace kvscope {

// ggml_vec_dot_f32: a 4 x 16-lane fused multiply-add over the first n & ~63 values, the
// lanes reduced pairwise (as GGML_F32x16_REDUCE and _mm512_reduce_add_ps), then the rest
// added one by one: products rounded for the first 8 * floor(rest / 8) of them (GCC turns
// that loop into 8-wide multiplies), fused for the last rest % 8. ggml uses this for a
// matrix product with one activation row (decoding) and whenever llamafile's sgemm
// declines (see ggml_mul_mat_uses_sgemm).
float ggml_dot_f32(const float* x, const float* y, std::int64_t n);

// llamafile's tinyBLAS dot (the sgemm ggml uses for a batch of rows): one 16-lane fused
// multiply-add over all n values (n % 16 == 0), reduced as _mm512_reduce_add_ps.
float ggml_sgemm_dot_f32(const float* x, const float* y, std::int64_t n);

// Whether ggml computes an F32 x F32 matrix product of W [rows][cols] and n_tokens
// activation rows with the sgemm (true) or with ggml_dot_f32 (false): llamafile_sgemm
// needs at least 2 rows, cols % 16 == 0 and rows % 4 == 0.
bool ggml_mul_mat_uses_sgemm(std::int64_t rows, std::int64_t cols, std::int64_t n_tokens);

// y[r] = dot(W row r, x) for rows [0, rows) of a row-major F32 matrix with `cols` columns,
// using the sgemm dot when `sgemm` is set (caller decides with ggml_mul_mat_uses_sgemm).
void ggml_mat_vec_f32(const float* w, std::int64_t rows, std::int64_t cols, const float* x,
                      float* y, bool sgemm);

// --- RoPE (ggml_rope_cache_init + rotate_pairs, no YaRN ramp) ---------------------------

// powf(freq_base, -2 / rope_dim): the ratio between consecutive pair angles.
float ggml_rope_theta_scale(float freq_base, std::int64_t rope_dim);

// cos/sin of every pair's angle at `pos`: theta_0 = pos, theta_{i+1} = theta_i * theta_scale
// (a float product per pair, as ggml accumulates it), angle = freq_scale * theta_i / factor_i
// (factor_i from a rope_freqs tensor, or 1), cosf / sinf of that. cos, sin: [n_pairs].
void ggml_rope_angles(std::int64_t pos, float theta_scale, float freq_scale,
                      std::span<const float> freq_factors, std::span<float> cos,
                      std::span<float> sin);

// One rotated pair as ggml's rotate_pairs compiles: x0' = fma(x0, c, -(x1 s)),
// x1' = fma(x0, s, x1 c).
void ggml_rope_rotate(float& x0, float& x1, float cos, float sin);
// The same with the multiplies and adds in two roundings, as ggml built for a CPU without
// FMA compiles it: for such CPUs, where std::fma is a slow software call.
void ggml_rope_rotate_unfused(float& x0, float& x1, float cos, float sin);

// --- SwiGLU (ggml_vec_swiglu_f32) -------------------------------------------------------

// out[i] = silu(gate[i]) * up[i] over one row of n values: 16-value groups use ggml's vector
// silu x / (1 + ggml_v_expf(0 - x)), the last n % 16 values x / (1 + expf(-x)) from libm.
// The grouping restarts at every row, so call it once per row. out may alias gate or up.
void ggml_swiglu_row(const float* gate, const float* up, float* out, std::int64_t n);

// out[i] = gelu_tanh(gate[i]) * up[i] (Gemma's GeGLU gate), with gelu_tanh(x) =
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) written as x / (1 + e^(-2z)) and the
// exponential ggml's vector one: float-accurate, where llama.cpp's CPU GELU rounds x to fp16
// and reads an fp16 table. AVX2 + FMA lanes fuse the cubic's multiply-add, the portable code
// rounds it twice (a few ulp apart). out may alias gate or up.
void geglu_row(const float* gate, const float* up, float* out, std::int64_t n);

// One lane of ggml_v_expf for __m512 (a polynomial, not libm's expf).
float ggml_v_expf(float x);

// The final horizontal sum of ggml's 16-lane accumulators (_mm512_reduce_add_ps as GCC
// defines it), shared by the dot products and the flash-attention score. v: [16].
float ggml_reduce16(const float* v);

}  // namespace kvscope
