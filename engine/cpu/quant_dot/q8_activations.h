// Activations as 8-bit codes, the input of the quantized dot products (quant_dot.h): each
// block of 32 values is x ≈ d * q with q = round(x / d), d = max|x| / 127, as llama.cpp's
// q8_0 / q8_1 activations. The scale is kept at fp16 precision (ggml stores it as fp16), the
// codes are rounded against the unrounded scale (as ggml does), ties to even.
//
// Beside the scale each block keeps s = d * sum(q) (ggml's q8_1 keeps it too, rounded to
// fp16; here it is a float): the weight formats with a minimum (Q4_1, Q5_1, Q4_K, Q5_K) add
// m * s per block instead of summing the codes again for every weight row. The integer sum
// itself serves the Q8_0 8-row groups (interleaved.h), whose codes are stored offset by 128,
// and the sum of the first 16 codes the Q6_K groups, whose halves have scales of their own.
#pragma once

#include <cstdint>
#include <span>

namespace kvscope {

inline constexpr int kQ8BlockValues = 32;

struct Q8Block {
  std::int8_t q[kQ8BlockValues];  // codes, |q| <= 127
  float d;                        // scale: value i ≈ d * q[i]
  float s;                        // d * sum
  std::int32_t sum;               // q[0] + ... + q[31]
  std::int32_t sum16;             // q[0] + ... + q[15]: Q6_K's groups recentre each half
};
static_assert(sizeof(Q8Block) == 48);

// out[b] = the codes of x[32b .. 32b + 31]. x.size() must be 32 * out.size(). A NaN or an
// infinity anywhere in a block gives that block the scale NaN, so the dot products that use
// it are NaN (the sampler then refuses the step) instead of silently finite.
void quantize_row_q8(std::span<const float> x, std::span<Q8Block> out);

}  // namespace kvscope
