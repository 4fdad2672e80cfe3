// Bit layouts of the CPU tensor formats: hand-made blocks whose values are known from the
// ggml format definitions (encoded here byte by byte, independently of the engine's block
// structs), F16/BF16 rounding, and the dispatcher's errors.
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/quant/quant_test_helpers.h"
#include "quant/tensor_type.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {
namespace {

using test::dequantize;
using test::quantize;

void put_half(std::vector<std::uint8_t>& out, float v) {
  const std::uint16_t h = float_to_fp16(v);
  out.push_back(static_cast<std::uint8_t>(h & 0xff));
  out.push_back(static_cast<std::uint8_t>(h >> 8));
}

// The block decodes to exactly `expected`, and dot_row agrees with it for a ramp x.
void expect_block_decodes(TensorType type, const std::vector<std::uint8_t>& block,
                          const std::vector<float>& expected) {
  const auto n = static_cast<std::int64_t>(expected.size());
  ASSERT_EQ(static_cast<std::int64_t>(block.size()), row_bytes(type, n));
  const std::vector<float> got = dequantize(type, block, n);
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], expected[i]) << tensor_type_name(type) << " value " << i;
  }
  std::vector<float> x(expected.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.5f - 1.5f;
  const test::RefDot ref = test::reference_dot(expected, x.data());
  EXPECT_NEAR(dot_row(type, block.data(), x.data(), n), ref.value, 1e-6 * ref.magnitude + 1e-6)
      << tensor_type_name(type);
}

TEST(QuantFloat, F16DequantizeMatchesScalarConversionForEveryBitPattern) {
  std::vector<std::uint8_t> row;
  for (std::uint32_t h = 0; h < 65536; ++h) {
    row.push_back(static_cast<std::uint8_t>(h & 0xff));
    row.push_back(static_cast<std::uint8_t>(h >> 8));
  }
  const std::vector<float> got = dequantize(TensorType::F16, row, 65536);
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float want = fp16_to_float(static_cast<std::uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got[h])) << "bits " << h;
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got[h]), std::bit_cast<std::uint32_t>(want))
          << "bits " << h;
    }
  }
}

TEST(QuantFloat, F16KnownValuesDecodeIncludingSubnormalsAndInfinities) {
  const std::vector<std::pair<std::uint16_t, float>> cases = {
      {0x0000, 0.0f},     {0x3c00, 1.0f},
      {0xc000, -2.0f},    {0x7bff, 65504.0f},
      {0x0001, 0x1p-24f}, {0x03ff, 1023 * 0x1p-24f},
      {0x0400, 0x1p-14f}, {0x3555, 0.333251953125f},
      {0x7c00, INFINITY}, {0xfc00, -INFINITY}};
  for (const auto& [bits, value] : cases) {
    const std::vector<std::uint8_t> row = {static_cast<std::uint8_t>(bits & 0xff),
                                           static_cast<std::uint8_t>(bits >> 8)};
    EXPECT_EQ(dequantize(TensorType::F16, row, 1)[0], value) << std::hex << bits;
  }
  const std::vector<std::uint8_t> neg_zero = {0x00, 0x80};
  EXPECT_TRUE(std::signbit(dequantize(TensorType::F16, neg_zero, 1)[0]));
}

TEST(QuantFloat, F16QuantizeRoundsToNearestEven) {
  const std::vector<float> x = {1.0f + 0x1p-11f,      // halfway: ties to even 1.0
                                1.0f + 3 * 0x1p-11f,  // halfway: ties to even 1 + 2^-9
                                65520.0f,             // rounds past 65504: inf
                                0x1p-25f,             // half the smallest subnormal: 0
                                3 * 0x1p-26f,         // rounds up to the smallest subnormal
                                -2.5f};
  const std::vector<std::uint8_t> row = quantize(TensorType::F16, x);
  const std::vector<std::uint16_t> want = {0x3c00, 0x3c02, 0x7c00, 0x0000, 0x0001, 0xc100};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(row[2 * i] | (row[2 * i + 1] << 8), want[i]) << "value " << i;
  }
}

TEST(QuantFloat, BF16DecodesTopHalfOfFloatAndRoundsToNearestEven) {
  const std::vector<float> x = {1.0f, -3.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, INFINITY, NAN};
  const std::vector<std::uint8_t> row = quantize(TensorType::BF16, x);
  const std::vector<std::uint16_t> want = {0x3f80, 0xc040, 0x3f80, 0x3f82, 0x7f80};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(row[2 * i] | (row[2 * i + 1] << 8), want[i]) << "value " << i;
  }
  const std::vector<float> back = dequantize(TensorType::BF16, row, 6);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], -3.0f);
  EXPECT_EQ(back[3], 1.0f + 0x1p-6f);
  EXPECT_EQ(back[4], INFINITY);
  EXPECT_TRUE(std::isnan(back[5]));
}

TEST(QuantFloat, F32RowIsStoredVerbatim) {
  const std::vector<float> x = {1.5f, -0.0f, 3e-39f, -7.25f, 1e30f};
  const std::vector<std::uint8_t> row = quantize(TensorType::F32, x);
  ASSERT_EQ(row.size(), 20u);
  const std::vector<float> back = dequantize(TensorType::F32, row, 5);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(back[i]), std::bit_cast<std::uint32_t>(x[i]));
  }
}

TEST(QuantLegacyLayout, Q4_0NibblesAreLowHalfThenHighHalfCentredOn8) {
  std::vector<std::uint8_t> block;
  put_half(block, 0.5f);
  for (int j = 0; j < 16; ++j) block.push_back(static_cast<std::uint8_t>(j | ((15 - j) << 4)));
  std::vector<float> want(32);
  for (int j = 0; j < 16; ++j) {
    want[j] = static_cast<float>(j - 8) * 0.5f;
    want[j + 16] = static_cast<float>(15 - j - 8) * 0.5f;
  }
  expect_block_decodes(TensorType::Q4_0, block, want);
}

TEST(QuantLegacyLayout, Q4_1AddsTheBlockMin) {
  std::vector<std::uint8_t> block;
  put_half(block, 0.25f);
  put_half(block, -1.0f);
  for (int j = 0; j < 16; ++j) block.push_back(static_cast<std::uint8_t>((15 - j) | (j << 4)));
  std::vector<float> want(32);
  for (int j = 0; j < 16; ++j) {
    want[j] = static_cast<float>(15 - j) * 0.25f - 1.0f;
    want[j + 16] = static_cast<float>(j) * 0.25f - 1.0f;
  }
  expect_block_decodes(TensorType::Q4_1, block, want);
}

// Q5_0/Q5_1: low 4 bits as in Q4_*, the 5th bit of value i is bit i of qh (little-endian).
std::vector<std::uint8_t> q5_payload(const std::vector<int>& q) {
  std::uint32_t qh = 0;
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 32; ++i) qh |= static_cast<std::uint32_t>(q[i] >> 4) << i;
  for (int b = 0; b < 4; ++b) out.push_back(static_cast<std::uint8_t>(qh >> (8 * b)));
  for (int j = 0; j < 16; ++j)
    out.push_back(static_cast<std::uint8_t>((q[j] & 15) | ((q[j + 16] & 15) << 4)));
  return out;
}

TEST(QuantLegacyLayout, Q5_0FifthBitComesFromQhCentredOn16) {
  std::vector<int> q(32);
  for (int i = 0; i < 32; ++i) q[i] = (i * 5 + 3) % 32;
  std::vector<std::uint8_t> block;
  put_half(block, 2.0f);
  const auto payload = q5_payload(q);
  block.insert(block.end(), payload.begin(), payload.end());
  std::vector<float> want(32);
  for (int i = 0; i < 32; ++i) want[i] = static_cast<float>(q[i] - 16) * 2.0f;
  expect_block_decodes(TensorType::Q5_0, block, want);
}

TEST(QuantLegacyLayout, Q5_1FifthBitComesFromQhPlusMin) {
  std::vector<int> q(32);
  for (int i = 0; i < 32; ++i) q[i] = 31 - i;
  std::vector<std::uint8_t> block;
  put_half(block, 0.5f);
  put_half(block, 0.125f);
  const auto payload = q5_payload(q);
  block.insert(block.end(), payload.begin(), payload.end());
  std::vector<float> want(32);
  for (int i = 0; i < 32; ++i) want[i] = static_cast<float>(q[i]) * 0.5f + 0.125f;
  expect_block_decodes(TensorType::Q5_1, block, want);
}

TEST(QuantLegacyLayout, Q8_0IsSignedBytesTimesScale) {
  std::vector<std::uint8_t> block;
  put_half(block, 0.125f);
  std::vector<float> want(32);
  for (int i = 0; i < 32; ++i) {
    const int q = i * 8 - 128;
    block.push_back(static_cast<std::uint8_t>(static_cast<std::int8_t>(q)));
    want[i] = static_cast<float>(q) * 0.125f;
  }
  expect_block_decodes(TensorType::Q8_0, block, want);
}

// Q4_K/Q5_K scales: 8 six-bit (scale, min) pairs in 12 bytes, as ggml's get_scale_min_k4.
void put_k4_scales(std::vector<std::uint8_t>& out, const int* sc, const int* m) {
  for (int j = 0; j < 4; ++j)
    out.push_back(static_cast<std::uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6)));
  for (int j = 0; j < 4; ++j)
    out.push_back(static_cast<std::uint8_t>(m[j] | ((m[j + 4] >> 4) << 6)));
  for (int j = 0; j < 4; ++j) {
    out.push_back(static_cast<std::uint8_t>((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4)));
  }
}

constexpr int kScK[8] = {1, 2, 3, 4, 17, 33, 48, 63};  // >= 16 exercises the top 2 bits
constexpr int kMinK[8] = {0, 5, 10, 63, 16, 31, 47, 2};

TEST(QuantKLayout, Q4_KSubBlockScalesAndMinsUnpackSixBits) {
  std::vector<int> q(256);
  for (int v = 0; v < 256; ++v) q[v] = (v * 7 + v / 32) % 16;
  std::vector<std::uint8_t> block;
  put_half(block, 0.5f);
  put_half(block, 0.25f);
  put_k4_scales(block, kScK, kMinK);
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l)
      block.push_back(static_cast<std::uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4)));
  }
  std::vector<float> want(256);
  for (int v = 0; v < 256; ++v) {
    want[v] =
        0.5f * static_cast<float>(kScK[v / 32] * q[v]) - 0.25f * static_cast<float>(kMinK[v / 32]);
  }
  expect_block_decodes(TensorType::Q4_K, block, want);
}

TEST(QuantKLayout, Q5_KFifthBitsInterleaveTwoBitsPerChunk) {
  std::vector<int> q(256);
  for (int v = 0; v < 256; ++v) q[v] = (v * 13 + v / 64) % 32;
  std::vector<std::uint8_t> block;
  put_half(block, 0.25f);
  put_half(block, 0.5f);
  put_k4_scales(block, kScK, kMinK);
  for (int l = 0; l < 32; ++l) {
    int qh = 0;
    for (int c = 0; c < 4; ++c)
      qh |= ((q[64 * c + l] >> 4) << (2 * c)) | ((q[64 * c + 32 + l] >> 4) << (2 * c + 1));
    block.push_back(static_cast<std::uint8_t>(qh));
  }
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      block.push_back(
          static_cast<std::uint8_t>((q[64 * c + l] & 15) | ((q[64 * c + 32 + l] & 15) << 4)));
    }
  }
  std::vector<float> want(256);
  for (int v = 0; v < 256; ++v) {
    want[v] =
        0.25f * static_cast<float>(kScK[v / 32] * q[v]) - 0.5f * static_cast<float>(kMinK[v / 32]);
  }
  expect_block_decodes(TensorType::Q5_K, block, want);
}

TEST(QuantKLayout, Q6_KSplitsSixBitsOverQlAndQhWithSignedGroupScales) {
  const int sc[16] = {-128, -64, -3, -1, 0, 1, 2, 5, 7, 16, 31, 63, 64, 100, 127, -100};
  std::vector<int> q(256);
  for (int v = 0; v < 256; ++v) q[v] = (v * 11 + 5) % 64;
  std::vector<std::uint8_t> ql(128), qh(64);
  for (int h = 0; h < 2; ++h) {
    const int* Q = q.data() + 128 * h;
    for (int l = 0; l < 32; ++l) {
      ql[64 * h + l] = static_cast<std::uint8_t>((Q[l] & 15) | ((Q[l + 64] & 15) << 4));
      ql[64 * h + l + 32] = static_cast<std::uint8_t>((Q[l + 32] & 15) | ((Q[l + 96] & 15) << 4));
      qh[32 * h + l] = static_cast<std::uint8_t>((Q[l] >> 4) | ((Q[l + 32] >> 4) << 2) |
                                                 ((Q[l + 64] >> 4) << 4) | ((Q[l + 96] >> 4) << 6));
    }
  }
  std::vector<std::uint8_t> block(ql);
  block.insert(block.end(), qh.begin(), qh.end());
  for (int s : sc) block.push_back(static_cast<std::uint8_t>(static_cast<std::int8_t>(s)));
  put_half(block, 0.25f);
  std::vector<float> want(256);
  for (int v = 0; v < 256; ++v) want[v] = 0.25f * static_cast<float>(sc[v / 16] * (q[v] - 32));
  expect_block_decodes(TensorType::Q6_K, block, want);
}

TEST(QuantDispatch, UnsupportedTypesThrowModelErrorNamingTheType) {
  std::vector<std::uint8_t> row(4096);
  std::vector<float> x(256);
  for (TensorType type : {TensorType::Q8_1, TensorType::Q2_K, TensorType::Q3_K, TensorType::Q8_K}) {
    const std::string name(tensor_type_name(type));
    try {
      dot_row(type, row.data(), x.data(), 256);
      ADD_FAILURE() << name << " did not throw";
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
    EXPECT_THROW(dequantize_row(type, row.data(), x.data(), 256), ModelError) << name;
    EXPECT_THROW(quantize_row(type, x.data(), row.data(), 256), ModelError) << name;
  }
  EXPECT_THROW(dot_row(static_cast<TensorType>(99), row.data(), x.data(), 256), ModelError);
}

TEST(QuantDispatch, RowLengthThatIsNotWholeBlocksThrowsUsageError) {
  std::vector<std::uint8_t> row(4096);
  std::vector<float> x(512);
  EXPECT_THROW(dot_row(TensorType::Q4_0, row.data(), x.data(), 48), UsageError);
  EXPECT_THROW(dot_row(TensorType::Q4_K, row.data(), x.data(), 32), UsageError);
  EXPECT_THROW(dequantize_row(TensorType::Q6_K, row.data(), x.data(), 300), UsageError);
  EXPECT_THROW(quantize_row(TensorType::Q8_0, x.data(), row.data(), -32), UsageError);
  EXPECT_NO_THROW(dot_row(TensorType::F16, row.data(), x.data(), 3));
}

TEST(QuantDispatch, QuantizeAndDequantizeWriteExactlyOneRow) {
  for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0,
                          TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                          TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
    const std::int64_t n = 512;
    const auto bytes = static_cast<std::size_t>(row_bytes(type, n));
    const std::vector<float> x = test::normal_values(n, 3);
    std::vector<std::uint8_t> row(bytes + 64, 0xAB);
    quantize_row(type, x.data(), row.data(), n);
    for (std::size_t i = bytes; i < row.size(); ++i)
      ASSERT_EQ(row[i], 0xAB) << tensor_type_name(type);
    std::vector<float> out(n + 16, 42.0f);
    dequantize_row(type, row.data(), out.data(), n);
    for (std::size_t i = n; i < out.size(); ++i) ASSERT_EQ(out[i], 42.0f) << tensor_type_name(type);
  }
}

}  // namespace
}  // namespace kvscope
