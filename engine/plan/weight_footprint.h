// Weight memory: exact for a loaded model (the bytes of every stored tensor, as
// Model::weight_bytes() and `inspect` count them), estimated for a preset from its
// parameter count and a weight type.
//
// Weight types for presets and their bits per weight:
//   f16 16, q8_0 8.5, q6_k 6.5625, q4_0 4.5   the types' own block geometry
//                                             (tensor_type.h bits_per_weight): every tensor
//                                             stored in that one type.
//   q5_k_m 5.68, q4_k_m 4.84                  llama.cpp's mixes (q5_K / q4_K with some
//                                             tensors in q6_K), whose bits per weight are
//                                             not a block property. The figures are the
//                                             file size / parameters llama.cpp measured
//                                             for Llama 2 7B (tools/quantize/README.md:
//                                             13B gives 5.67 / 4.83, 70B 5.65 / 4.80), so a
//                                             preset estimate is within ~1% of a real file.
// A real quantized file keeps its norms in f32 (under 0.01% of a 7B model), which the
// estimate ignores.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "model/model_spec.h"

namespace kvscope {

class Model;

enum class WeightType { F16, Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q4_0 };

struct WeightTypeInfo {
  WeightType type;
  std::string_view name;  // "f16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0"
  double bits_per_weight;
};

std::span<const WeightTypeInfo> weight_types();
const WeightTypeInfo& weight_type_info(WeightType type);
// Case-insensitive ("Q4_K_M" works). UsageError naming the text and the accepted names.
WeightType parse_weight_type(std::string_view name);

struct WeightFootprint {
  std::int64_t bytes = 0;  // held in memory
  // Streamed from memory to decode one token: all weights except an untied token
  // embedding table, of which only the token's own row is read.
  std::int64_t read_per_token = 0;
  std::string basis;  // how `bytes` was obtained, for the explainer
};

// n_params x bits_per_weight / 8, rounded up. The token table is vocab x dim parameters
// at the same bits per weight.
WeightFootprint preset_weights(const ModelSpec& spec, std::int64_t n_params, WeightType type);

// The stored bytes of every tensor of a loaded model (tied tensors counted once).
WeightFootprint model_weights(const Model& model);

}  // namespace kvscope
