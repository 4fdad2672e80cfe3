#include "plan/weight_footprint.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "model/model.h"
#include "plan/units.h"
#include "quant/tensor_type.h"
#include "util/error.h"

namespace kvscope {

namespace {

// Bits per weight as a fraction num / den, so bytes come out exact for the block types.
struct Bits {
  std::int64_t num;
  std::int64_t den;
};

Bits block_bits(TensorType type) {
  const TensorTypeInfo& info = tensor_type_info(type);
  return {8 * info.block_bytes, info.block_elems};
}

Bits bits_of(WeightType type) {
  switch (type) {
    case WeightType::F16:
      return block_bits(TensorType::F16);
    case WeightType::Q8_0:
      return block_bits(TensorType::Q8_0);
    case WeightType::Q6_K:
      return block_bits(TensorType::Q6_K);
    case WeightType::Q5_K_M:
      return {568, 100};  // 5.68: see the header
    case WeightType::Q4_K_M:
      return {484, 100};  // 4.84
    case WeightType::Q4_0:
      return block_bits(TensorType::Q4_0);
  }
  throw_error<UsageError>("unknown weight type {}", static_cast<int>(type));
}

const std::array<WeightTypeInfo, 6>& table() {
  static const std::array<WeightTypeInfo, 6> types = [] {
    std::array<WeightTypeInfo, 6> t{{
        {WeightType::F16, "f16", 0},
        {WeightType::Q8_0, "q8_0", 0},
        {WeightType::Q6_K, "q6_k", 0},
        {WeightType::Q5_K_M, "q5_k_m", 0},
        {WeightType::Q4_K_M, "q4_k_m", 0},
        {WeightType::Q4_0, "q4_0", 0},
    }};
    for (auto& info : t) {
      const Bits b = bits_of(info.type);
      info.bits_per_weight = static_cast<double>(b.num) / static_cast<double>(b.den);
    }
    return t;
  }();
  return types;
}

// ceil(n x bits / 8). n < 2^44 and num <= 800 keep the product inside 64 bits.
std::int64_t bytes_for(std::int64_t n, Bits bits) {
  const std::int64_t den = 8 * bits.den;
  return (n * bits.num + den - 1) / den;
}

}  // namespace

std::span<const WeightTypeInfo> weight_types() {
  return table();
}

const WeightTypeInfo& weight_type_info(WeightType type) {
  for (const auto& info : table()) {
    if (info.type == type) return info;
  }
  throw_error<UsageError>("unknown weight type {}", static_cast<int>(type));
}

WeightType parse_weight_type(std::string_view name) {
  std::string lowered(name);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string known;
  for (const auto& info : table()) {
    if (info.name == lowered) return info.type;
    known += (known.empty() ? "" : ", ") + std::string(info.name);
  }
  throw_error<UsageError>("unknown weight type \"{}\"; known: {}", name, known);
}

WeightFootprint preset_weights(const ModelSpec& spec, std::int64_t n_params, WeightType type) {
  constexpr std::int64_t kMaxParams = std::int64_t{1} << 44;
  if (n_params < 1 || n_params > kMaxParams) {
    throw_error<UsageError>("weights: parameter count {} outside [1, {}]", n_params, kMaxParams);
  }
  const Bits bits = bits_of(type);
  const WeightTypeInfo& info = weight_type_info(type);
  WeightFootprint w;
  w.bytes = bytes_for(n_params, bits);
  const std::int64_t table_params = std::min(n_params, spec.vocab_size * spec.dim);
  const std::int64_t row = bytes_for(spec.dim, bits);
  w.read_per_token = spec.tied_embeddings ? w.bytes : w.bytes - bytes_for(table_params, bits) + row;
  w.basis = fmt::format("{} parameters x {:g} bits ({}) / 8", group_digits(n_params),
                        info.bits_per_weight, info.name);
  return w;
}

WeightFootprint model_weights(const Model& model) {
  const ModelWeights& mw = model.weights();
  WeightFootprint w;
  w.bytes = static_cast<std::int64_t>(model.weight_bytes());
  const bool tied = !mw.output || mw.output.data == mw.token_embd.data;
  const std::int64_t row = mw.token_embd ? mw.token_embd.row_bytes() : 0;
  const std::int64_t table = mw.token_embd ? mw.token_embd.rows * row : 0;
  w.read_per_token = tied ? w.bytes : w.bytes - table + row;
  w.basis = fmt::format("the stored tensors of {} (exact)", model.path());
  return w;
}

}  // namespace kvscope
