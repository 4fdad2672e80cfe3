// dot_row against the dot product of the dequantized row, for every type, several row
// lengths (block-boundary and SIMD-tail crossings), arbitrary block bytes and unaligned rows.
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "engine/quant/quant_test_helpers.h"
#include "quant/tensor_type.h"
#include "util/half.h"

namespace kvscope {
namespace {

using test::dequantize;
using test::quantize;

struct LengthCase {
  TensorType type;
  std::vector<std::int64_t> lengths;
};

const std::vector<std::int64_t> kFloatLengths = {1, 3, 15, 16, 17, 31, 255, 256, 257, 1000, 4099};
const std::vector<std::int64_t> kLegacyLengths = {32, 64, 96, 256, 1024, 4128};
const std::vector<std::int64_t> kKLengths = {256, 512, 768, 4096};

const std::vector<LengthCase> kCases = {
    {TensorType::F32, kFloatLengths},   {TensorType::F16, kFloatLengths},
    {TensorType::BF16, kFloatLengths},  {TensorType::Q4_0, kLegacyLengths},
    {TensorType::Q4_1, kLegacyLengths}, {TensorType::Q5_0, kLegacyLengths},
    {TensorType::Q5_1, kLegacyLengths}, {TensorType::Q8_0, kLegacyLengths},
    {TensorType::Q4_K, kKLengths},      {TensorType::Q5_K, kKLengths},
    {TensorType::Q6_K, kKLengths}};

// dot_row(row) == sum dequantized[i] * x[i], up to float rounding of the sums.
void expect_dot_matches_dequantized(TensorType type, const std::vector<std::uint8_t>& row,
                                    const std::vector<float>& x, std::int64_t n) {
  const std::vector<float> w = dequantize(type, row, n);
  const test::RefDot ref = test::reference_dot(w, x.data());
  const float got = dot_row(type, row.data(), x.data(), n);
  EXPECT_NEAR(got, ref.value, 2e-6 * ref.magnitude + 1e-6) << tensor_type_name(type) << " n=" << n;
}

TEST(QuantDot, MatchesDotOfDequantizedRowForEveryTypeAndLength) {
  for (const auto& c : kCases) {
    for (std::int64_t n : c.lengths) {
      const auto count = static_cast<std::size_t>(n);
      const std::vector<float> w = test::normal_values(count, static_cast<std::uint32_t>(n));
      const std::vector<float> x = test::normal_values(count, static_cast<std::uint32_t>(n + 1));
      expect_dot_matches_dequantized(c.type, quantize(c.type, w), x, n);
    }
  }
}

// Every bit of every quant field set at random; only the fp16 scales are kept finite and
// of a sane size (byte offsets from the ggml block layouts).
TEST(QuantDot, MatchesDotOfDequantizedRowOnArbitraryBlockBytes) {
  struct Layout {
    TensorType type;
    int block_bytes;
    std::vector<int> half_offsets;
  };
  const std::vector<Layout> layouts = {
      {TensorType::Q4_0, 18, {0}},     {TensorType::Q4_1, 20, {0, 2}},
      {TensorType::Q5_0, 22, {0}},     {TensorType::Q5_1, 24, {0, 2}},
      {TensorType::Q8_0, 34, {0}},     {TensorType::Q4_K, 144, {0, 2}},
      {TensorType::Q5_K, 176, {0, 2}}, {TensorType::Q6_K, 210, {208}}};
  const std::int64_t n = 1024;
  const std::vector<float> x = test::normal_values(n, 21);
  test::Lcg lcg(5);
  for (const auto& l : layouts) {
    std::vector<std::uint8_t> row(static_cast<std::size_t>(row_bytes(l.type, n)));
    for (auto& b : row) b = lcg.next_byte();
    for (std::size_t start = 0; start < row.size();
         start += static_cast<std::size_t>(l.block_bytes)) {
      for (int offset : l.half_offsets) {
        const float scale = static_cast<float>(lcg.next() % 1000) * 1e-4f - 0.05f;
        const std::uint16_t h = float_to_fp16(scale);
        row[start + static_cast<std::size_t>(offset)] = static_cast<std::uint8_t>(h & 0xff);
        row[start + static_cast<std::size_t>(offset) + 1] = static_cast<std::uint8_t>(h >> 8);
      }
    }
    expect_dot_matches_dequantized(l.type, row, x, n);
  }
}

// Blocks have no alignment requirement: a row at an odd address reads the same values.
TEST(QuantDot, ReadsRowsAtAnyByteOffset) {
  const std::int64_t n = 512;
  const std::vector<float> w = test::normal_values(n, 30);
  const std::vector<float> x = test::normal_values(n, 31);
  for (const auto& c : kCases) {
    if (c.type == TensorType::F32) continue;  // F32 rows are read as floats (4-byte aligned)
    const std::vector<std::uint8_t> row = quantize(c.type, w);
    std::vector<std::uint8_t> shifted(row.size() + 1);
    std::memcpy(shifted.data() + 1, row.data(), row.size());
    const float aligned = dot_row(c.type, row.data(), x.data(), n);
    EXPECT_EQ(dot_row(c.type, shifted.data() + 1, x.data(), n), aligned)
        << tensor_type_name(c.type);
    std::vector<float> a(n), b(n);
    dequantize_row(c.type, row.data(), a.data(), n);
    dequantize_row(c.type, shifted.data() + 1, b.data(), n);
    EXPECT_EQ(a, b) << tensor_type_name(c.type);
  }
}

// Small integers multiply and add exactly in float, so every lane and the tail must count.
TEST(QuantDot, F32AndF16DotsAreExactOnSmallIntegers) {
  for (std::int64_t n : {1, 7, 16, 33, 1000}) {
    std::vector<float> w(static_cast<std::size_t>(n));
    std::vector<float> x(static_cast<std::size_t>(n));
    double want = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
      w[i] = static_cast<float>(i % 17) - 8.0f;
      x[i] = static_cast<float>((i * 5) % 13) - 6.0f;
      want += static_cast<double>(w[i]) * x[i];
    }
    for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::BF16}) {
      EXPECT_EQ(dot_row(type, quantize(type, w).data(), x.data(), n), static_cast<float>(want))
          << tensor_type_name(type) << " n=" << n;
    }
  }
}

}  // namespace
}  // namespace kvscope
