// Random weight matrices written straight as stored blocks, for benchmark models of real
// sizes (billions of weights), where quantizing random floats row by row would take
// minutes. The values follow the same law as write_synthetic_gguf's quantized ones,
// uniform in about +-scale:
//   F32, F16  the values themselves
//   Q8_0      d = scale / 127 and codes uniform in [-127, 127]
//   Q4_0      d = scale / 8 and nibbles uniform in [0, 15] (values (q - 8) d)
//   Q4_K      sub-block scales and mins 63, nibbles uniform (values 2 scale q / 15 - scale)
//   Q6_K      group scales 127, 6-bit codes uniform (values scale (q - 32) / 32)
// Deterministic: the same type, shape, scale and seed give the same bytes everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "quant/tensor_type.h"

namespace kvscope {

// The stored bytes of a [rows][cols] matrix of `type`, or nullopt for a type this
// generator does not write (the caller quantizes floats instead). cols must be a multiple
// of the type's block (UsageError otherwise).
std::optional<std::vector<std::uint8_t>> random_weight_blocks(TensorType type, std::int64_t rows,
                                                              std::int64_t cols, float scale,
                                                              std::uint64_t seed);

}  // namespace kvscope
