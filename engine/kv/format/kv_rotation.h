// The Hadamard basis of int4 KV vectors.
//
// A 4-bit group spends its 16 levels on the group's range, and a few large channels (RoPE's
// low frequencies, outlier features) set that range for all the others. An orthonormal
// Walsh-Hadamard transform H spreads every channel over all of them, so the group ranges
// shrink to what the typical value needs (exllamav2's Q4 cache, QuaRot). H is applied where
// the decoder produces the vectors, never inside the formats, and undone by linearity:
//
//   K int4: the cache stores H k; the query is turned too, and (H q) . (H k) = q . k
//   V int4: the cache stores H v; attention's output sum_i w_i H v_i = H (sum_i w_i v_i)
//           is turned back with H again (H is symmetric and H H = I)
//
// So the formats (kv_format.h), the attention kernels (CPU and CUDA) and the bytes of a
// block are those of any other int4 cache; only the decoder's q, k, v and attention-output
// rows of a layer with int4 K or V pass through kv_rotate_rows. The quantization error the
// cache records is the same in either basis (H preserves lengths).
//
// H of a head_dim that is not a power of two is block-diagonal over its binary digits,
// largest first (head_dim 80 = 64 + 16: a 64-point and a 16-point transform), each
// normalized by 1 / sqrt(size).
#pragma once

#include <cstdint>

#include "kv/format/kv_format.h"

namespace kvscope {

// Whether this side of a layer stored as `dtype` lives in the Hadamard basis: Int4, on
// either side. F16 and Int8 lose too little to rotation to pay for it: on SmolLM2-135M the
// rotated int8 cache's KL is already at the noise floor of the 8-bit activations (the
// README's KV cache table has the figures).
bool kv_rotated(KvSide side, KvDtype dtype);

// x [n_rows][head_dim] <- each row times H, in place. Butterflies in a fixed order, then one
// multiply per value, so the CUDA kernel (kernels/ops/hadamard.cu) gives the same bits.
void kv_rotate_rows(float* x, std::int64_t n_rows, std::int64_t head_dim);

}  // namespace kvscope
