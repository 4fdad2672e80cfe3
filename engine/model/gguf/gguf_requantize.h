// Re-encodes a GGUF model's weight matrices in another tensor type with the engine's own
// quantizers (byte-identical to ggml's), keeping every metadata key and every 1-D tensor
// (norms, biases) as it is: how the Q8_0, Q4_0, Q4_K and F16 copies of a model that the tests
// and benchmarks compare are made, and `kvscope-cli quantize`.
//
// A matrix whose rows do not divide into the target's blocks falls back as llama.cpp's
// quantizer does (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, legacy 32-blocks -> F16), so a
// Q4_K copy of a 576-wide model is Q4_K where it can be and Q5_0 elsewhere.
#pragma once

#include <cstdint>
#include <string>

#include "quant/tensor_type.h"

namespace kvscope {

struct RequantizeReport {
  std::int64_t matrices = 0;    // re-encoded in the target type
  std::int64_t fallbacks = 0;   // re-encoded in the fallback type
  std::int64_t kept = 0;        // 1-D tensors copied as they were
  std::uint64_t bytes_out = 0;  // tensor data written
};

// The type a matrix with rows of `row_length` values gets when `target` is asked for.
TensorType requantize_type(TensorType target, std::int64_t row_length);

// Writes `dst` (through a temporary file renamed into place): `src` with its matrices in
// `target`. Throws UsageError for a target the engine cannot write (Q8_1, Q2_K, ...), and
// ModelError / IoError as reading and writing do.
RequantizeReport requantize_gguf(const std::string& src, const std::string& dst, TensorType target);

}  // namespace kvscope
