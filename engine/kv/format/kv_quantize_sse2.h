// SSE2 versions of the KV cache's writers (kv_format.h) for the shapes real models have,
// SSE2 being in every x86-64 CPU (as for kv_rotation's Hadamard). Each value goes through
// the same IEEE operations as in the scalar code (a subtraction, a multiply, the clamp, the
// rounding half away from zero, fp16's round to nearest even) and each group's scale comes
// from the same function (group_scales.h), so the bytes are the scalar code's, which the
// CUDA append kernel is tested against.
//
// Each returns false, having written nothing, when it does not take the input, and the
// caller runs the scalar code:
//   - groups that are not whole vectors of 4 (head_dim not a multiple of the group size);
//   - a value that is not a number or infinite (the scalar rules for those stay in one place);
//   - a build for another CPU.
// Why: a prompt's tokens were written one scalar value at a time, with software fp16
// conversions, at about 5,400 instructions per 64-value int4 key (callgrind, SmolLM2).
#pragma once

#include <cstdint>

#include "kv/format/kv_format.h"

namespace kvscope::kv_sse2 {

// The most values a caller's stack buffer for dequantize / k4_dequantize needs to hold.
inline constexpr std::int64_t kMaxHeadDim = 512;

// out[2n] = the fp16 bits of x[n], little-endian (float_to_fp16's, NaN included); n a
// multiple of 4.
bool store_f16(const float* x, std::int64_t n, std::uint8_t* out);

// kv_quantize for Int8 and Int4 (symmetric groups of 32): head_dim a multiple of 32.
bool quantize_symmetric(KvDtype dtype, const float* x, std::int64_t head_dim, std::uint8_t* data,
                        std::uint16_t* scales);

// kv_k4_quantize: groups of 16 (head_dim a multiple of 16, at least 32), every residual
// x - offset finite.
bool k4_quantize(const float* x, const std::uint16_t* offsets, std::int64_t head_dim,
                 std::uint8_t* data, std::uint16_t* scales);

// The read side, for the error measurement of every written vector (kv_quant_sq_error,
// kv_k4_sq_error): out[head_dim] = the stored values, each the scalar decoder's float
// (s * q; (o + m) + s * code; an fp16 value), for the shapes above and F16 (head_dim a
// multiple of 4); false for an fp16 value or offset that is inf or NaN.
bool dequantize(KvDtype dtype, const std::uint8_t* data, const std::uint16_t* scales,
                std::int64_t head_dim, float* out);
bool k4_dequantize(const std::uint8_t* data, const std::uint16_t* scales,
                   const std::uint16_t* offsets, std::int64_t head_dim, float* out);

}  // namespace kvscope::kv_sse2

namespace kvscope {

// The scalar writers, for the tests that hold the SSE2 ones to their bytes (kv_quantize and
// kv_k4_quantize call the SSE2 versions first).
void kv_quantize_portable(KvDtype dtype, const float* x, std::int64_t head_dim, std::uint8_t* data,
                          std::uint16_t* scales);
void kv_k4_quantize_portable(const float* x, const std::uint16_t* offsets, std::int64_t head_dim,
                             std::uint8_t* data, std::uint16_t* scales);

// sum_i (x[i] - stored[i])^2 in double, in order: the error measurement's sum (the same as
// kv_quant_sq_error's and kv_k4_sq_error's scalar visits) over values decoded beforehand.
double kv_sq_error_of(const float* x, const float* stored, std::int64_t n);

}  // namespace kvscope
