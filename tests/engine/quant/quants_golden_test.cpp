// Golden vectors from gguf-py 0.19 (llama.cpp's own Python implementation of the ggml
// formats, independent of this code): inputs are made with an LCG that the generating
// Python script reproduces exactly, so the expected bytes and values are exact.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/quant/quant_test_helpers.h"
#include "quant/tensor_type.h"
#include "util/half.h"

namespace kvscope {
namespace {

using test::dequantize;
using test::quantize;

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// Expected bytes from gguf-py 0.19 (gguf.quants.quantize) for 64 LCG floats (seed 7).
TEST(QuantGolden, LegacyQuantizeMatchesGgufPyBytes) {
  test::Lcg lcg(7);
  std::vector<float> x(64);
  for (auto& v : x) v = lcg.next_float();
  const std::vector<std::pair<TensorType, std::string>> cases = {
      {TensorType::Q4_0,
       "f1bb5b26b5e2f03f7090464d05caa1cadf58cc3b1f112ff625d1d277d5b380c7a18c43da"},
      {TensorType::Q4_1,
       "3c3cf0c7b4da4a2d0fc19f7fc9b2fa466e3630a8b83bccc71f112ff625d1d277d5b380c7a18c43da"},
      {TensorType::Q5_0,
       "f1b721ea9c78964b7bc5f07ee0207c9b0a7431939fa0cc3705a068bf2d124edc3aa1a5efba56008e420886b4"},
      {TensorType::Q5_1,
       "1938f0c7de95638769b4953a0f812fef8365f59cce7c70607937ccc705a068bf2f124ffc4ab1b5ffca6710af52"
       "0987c4"},
      {TensorType::Q8_0,
       "012ccc262a597f8d7d7c1fab2ce374e58301375ccb9d814814f447397cc7e7bbb732dc2b6b906dddd08ba6f5cd"
       "b481f0913fb31c938ca16a9d4d4ff0542b024323fcbe55"},
  };
  for (const auto& [type, hex] : cases) {
    EXPECT_EQ(quantize(type, x), from_hex(hex)) << tensor_type_name(type);
  }
}

struct KGolden {
  TensorType type;
  std::vector<std::pair<std::size_t, float>> scale_fields;  // byte offset -> fp16 value
  double sum;
  std::vector<std::pair<int, float>> samples;
};

// A block of LCG bytes (seed 11) with sane fp16 scales, dequantized by gguf-py 0.19.
TEST(QuantGolden, KQuantDequantizeMatchesGgufPy) {
  const std::vector<KGolden> cases = {
      {TensorType::Q4_K,
       {{0, 0.0234375f}, {2, 0.01171875f}},
       1843.78125,
       {{0, 4.91015625f},
        {21, 7.01953125f},
        {42, 6.10546875f},
        {63, 6.76171875f},
        {68, 6.45703125f},
        {89, 14.14453125f},
        {110, 15.17578125f},
        {115, 8.26171875f},
        {136, 2.4375f},
        {157, 2.859375f},
        {162, 15.84375f},
        {183, 5.15625f},
        {204, 15.33984375f},
        {209, 15.33984375f},
        {230, 10.93359375f},
        {251, 10.93359375f}}},
      {TensorType::Q5_K,
       {{0, 0.0234375f}, {2, 0.005859375f}},
       3833.4140625,
       {{0, 28.294921875f},
        {21, 24.076171875f},
        {42, 8.958984375f},
        {63, 19.458984375f},
        {68, 23.888671875f},
        {89, 28.693359375f},
        {110, 41.466796875f},
        {115, 31.787109375f},
        {136, 0.69140625f},
        {157, 3.64453125f},
        {162, 29.296875f},
        {183, 9.2578125f},
        {204, 2.044921875f},
        {209, 12.169921875f},
        {230, 25.294921875f},
        {251, 17.583984375f}}},
      {TensorType::Q6_K,
       {{208, 0.0234375f}},
       -17.625,
       {{0, -7.734375f},
        {21, 17.2265625f},
        {42, -20.484375f},
        {63, -29.6484375f},
        {68, 20.25f},
        {89, 3.046875f},
        {110, -2.296875f},
        {115, -9.609375f},
        {136, 46.7578125f},
        {157, -5.6953125f},
        {162, -45.7734375f},
        {183, -40.4296875f},
        {204, -12.375f},
        {209, 28.3359375f},
        {230, 6.4453125f},
        {251, -0.3515625f}}},
  };
  for (const auto& c : cases) {
    test::Lcg lcg(11);
    std::vector<std::uint8_t> block(static_cast<std::size_t>(row_bytes(c.type, 256)));
    for (auto& b : block) b = lcg.next_byte();
    for (const auto& [offset, value] : c.scale_fields) {
      const std::uint16_t h = float_to_fp16(value);
      block[offset] = static_cast<std::uint8_t>(h & 0xff);
      block[offset + 1] = static_cast<std::uint8_t>(h >> 8);
    }
    const std::vector<float> got = dequantize(c.type, block, 256);
    double sum = 0.0;
    for (float v : got) sum += v;
    EXPECT_EQ(sum, c.sum) << tensor_type_name(c.type);
    for (const auto& [index, value] : c.samples) {
      EXPECT_EQ(got[index], value) << tensor_type_name(c.type) << " value " << index;
    }
  }
}

}  // namespace
}  // namespace kvscope
