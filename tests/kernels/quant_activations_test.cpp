// 8-bit activations (quant_activations.h): the host reference on its own (codes within half
// a step, NaN and infinities kept visible, zero blocks), and the device quantizer against it
// bit for bit.
#include "quant/quant_activations.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "backend/kernel_launchers.h"
#include "kernel_test_support.h"
#include "util/error.h"

namespace kvscope {
namespace {

namespace qd = cuda::qd;

struct Quantized {
  std::vector<std::int8_t> q;
  std::vector<float> d;  // [blocks]
};

Quantized quantize(const std::vector<float>& x) {
  Quantized r{std::vector<std::int8_t>(x.size()), std::vector<float>(x.size() / 32)};
  qd::quantize_q8_reference(x.data(), static_cast<std::int64_t>(x.size()), r.q.data(), r.d.data());
  return r;
}

TEST(QuantActivations, CodesAreWithinHalfAStepAndTheLargestIsPlusOrMinus127) {
  auto x = test::random_floats(32 * 50, 3);
  for (std::size_t i = 0; i < x.size(); i += 70) x[i] *= 100.0f;
  const Quantized r = quantize(x);
  for (std::size_t b = 0; b < x.size() / 32; ++b) {
    const float d = r.d[b];
    int widest = 0;
    for (std::size_t i = 32 * b; i < 32 * b + 32; ++i) {
      EXPECT_LE(std::fabs(x[i] - d * r.q[i]), 0.5f * d * (1.0f + 1e-6f)) << "value " << i;
      widest = std::max(widest, std::abs(static_cast<int>(r.q[i])));
    }
    EXPECT_EQ(widest, 127) << "block " << b;
  }
}

TEST(QuantActivations, AZeroBlockHasScaleZeroAndCodesZero) {
  const Quantized r = quantize(std::vector<float>(64, 0.0f));
  for (const std::int8_t q : r.q) EXPECT_EQ(q, 0);
  for (const float v : r.d) EXPECT_EQ(v, 0.0f);
}

// A NaN or an infinity must reach the projection's result (the sampler then reports the
// broken step): the block's scale carries it, whatever the other 31 values are.
TEST(QuantActivations, NanAndInfinityStayVisibleInTheScale) {
  std::vector<float> x(96, 0.5f);
  x[40] = std::numeric_limits<float>::quiet_NaN();  // block 1
  x[70] = -std::numeric_limits<float>::infinity();  // block 2
  const Quantized r = quantize(x);
  EXPECT_EQ(r.d[0], 0.5f / 127.0f);
  EXPECT_TRUE(std::isnan(r.d[1]));
  EXPECT_TRUE(std::isinf(r.d[2]));
  // codes of such blocks are 0, so d * sum(q * w) is NaN (inf * 0) or NaN
  for (int i = 32; i < 96; ++i) EXPECT_EQ(r.q[static_cast<std::size_t>(i)], 0) << i;
}

TEST(QuantActivations, TheDeviceQuantizerIsTheReferenceBitForBit) {
  KVSCOPE_REQUIRE_CUDA();
  for (const int n_blocks : {1, 7, 8, 9, 1000}) {
    auto x = test::random_floats(static_cast<std::size_t>(32 * n_blocks), 11u + n_blocks, 3.0f);
    for (std::size_t i = 5; i < x.size(); i += 37) x[i] *= 50.0f;
    if (n_blocks > 8) x[8 * 32 + 3] = std::numeric_limits<float>::quiet_NaN();
    const Quantized want = quantize(x);
    auto dx = test::to_device(x);
    auto dq = test::device_zeros<std::int8_t>(x.size());
    auto dd = test::device_zeros<float>(want.d.size());
    cuda::launch_quantize_q8(dx.as<float>(), static_cast<std::int64_t>(x.size()),
                             dq.as<std::int8_t>(), dd.as<float>(), nullptr);
    const auto q = test::from_device<std::int8_t>(dq, x.size());
    const auto d = test::from_device<float>(dd, want.d.size());
    EXPECT_EQ(q, want.q) << n_blocks << " blocks";
    for (std::size_t i = 0; i < d.size(); ++i) {
      // the same bits, or both NaN (a GPU's NaN is canonical, the host keeps the payload)
      const bool same = std::memcmp(&d[i], &want.d[i], sizeof(float)) == 0 ||
                        (std::isnan(d[i]) && std::isnan(want.d[i]));
      ASSERT_TRUE(same) << n_blocks << " blocks, block " << i << ": " << d[i] << " want "
                        << want.d[i];
    }
  }
}

TEST(QuantActivations, TheLauncherRejectsPartialBlocks) {
  EXPECT_THROW(cuda::launch_quantize_q8(nullptr, 33, nullptr, nullptr, nullptr), UsageError);
}

}  // namespace
}  // namespace kvscope
