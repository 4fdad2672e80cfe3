#include "quant/tensor_type.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "util/error.h"

namespace kvscope {

namespace {

// Block geometry as defined by ggml (ggml.c type_traits). QK_K = 256 for the K-quants.
constexpr std::array<TensorTypeInfo, 15> kTypes{{
    {TensorType::F32, "f32", 1, 4, true},
    {TensorType::F16, "f16", 1, 2, true},
    {TensorType::Q4_0, "q4_0", 32, 18, true},
    {TensorType::Q4_1, "q4_1", 32, 20, true},
    {TensorType::Q5_0, "q5_0", 32, 22, true},
    {TensorType::Q5_1, "q5_1", 32, 24, true},
    {TensorType::Q8_0, "q8_0", 32, 34, true},
    {TensorType::Q8_1, "q8_1", 32, 36, false},
    {TensorType::Q2_K, "q2_K", 256, 84, false},
    {TensorType::Q3_K, "q3_K", 256, 110, false},
    {TensorType::Q4_K, "q4_K", 256, 144, true},
    {TensorType::Q5_K, "q5_K", 256, 176, true},
    {TensorType::Q6_K, "q6_K", 256, 210, true},
    {TensorType::Q8_K, "q8_K", 256, 292, false},
    {TensorType::BF16, "bf16", 1, 2, true},
}};

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<TensorTypeInfo> tensor_type_info(std::uint32_t raw_type) {
  for (const auto& t : kTypes) {
    if (static_cast<std::uint32_t>(t.type) == raw_type) return t;
  }
  return std::nullopt;
}

const TensorTypeInfo& tensor_type_info(TensorType type) {
  for (const auto& t : kTypes) {
    if (t.type == type) return t;
  }
  throw_error<ModelError>("unknown tensor type {}", static_cast<std::uint32_t>(type));
}

std::string_view tensor_type_name(TensorType type) {
  return tensor_type_info(type).name;
}

std::optional<TensorType> tensor_type_from_name(std::string_view name) {
  for (const auto& t : kTypes) {
    if (iequals(t.name, name)) return t.type;
  }
  return std::nullopt;
}

std::int64_t row_bytes(TensorType type, std::int64_t n) {
  const auto& info = tensor_type_info(type);
  return n / info.block_elems * info.block_bytes;
}

double bits_per_weight(TensorType type) {
  const auto& info = tensor_type_info(type);
  return 8.0 * static_cast<double>(info.block_bytes) / static_cast<double>(info.block_elems);
}

}  // namespace kvscope
