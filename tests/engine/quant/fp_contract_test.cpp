// What -ffp-contract=off (engine/CMakeLists.txt) keeps from changing. The test links the
// codecs twice: the library's copy, built unfused as the CUDA kernels compute (__fmul_rn,
// __fadd_rn), and a probe copy of the same sources built with multiply-adds contracted into
// FMAs (tests/CMakeLists.txt: namespace quants_contracted). Where the two differ, a build
// that contracted (an aarch64 host, -march=native) would have failed every bit-for-bit
// comparison with the device and with ggml's bytes.
//
// What it finds: dequantize_row is immune (each product is a small integer times an fp16
// scale, exact in float, so fusing changes no rounding; the same holds for the int4 KV
// codec's (o + m) + s * code), but the dot products and the symmetric quantizers change.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/quant/quant_test_helpers.h"
#include "quant/quant_blocks.h"
#include "quant/tensor_type.h"

// The probe's functions (quants_legacy.cpp and quants_k.cpp compiled with -ffp-contract=fast).
namespace kvscope::quants_contracted {
void dequantize_q4_1(const void* src, float* dst, std::int64_t n);
void dequantize_q4_K(const void* src, float* dst, std::int64_t n);
void dequantize_q5_K(const void* src, float* dst, std::int64_t n);
void quantize_q4_0(const float* x, void* dst, std::int64_t n);
float dot_q4_1(const void* row, const float* x, std::int64_t n);
float dot_q4_K(const void* row, const float* x, std::int64_t n);
float dot_q6_K(const void* row, const float* x, std::int64_t n);
}  // namespace kvscope::quants_contracted

namespace kvscope {
namespace {

namespace exact = quants;
namespace fused = quants_contracted;

// The probe holds FMA instructions on x86 (-mfma): running it needs a CPU that has them.
#define KVSCOPE_REQUIRE_PROBE_CPU()                                                       \
  do {                                                                                    \
    if (KVSCOPE_PROBE_NEEDS_X86_FMA && !cpu_has_fma()) {                                  \
      GTEST_SKIP() << "this CPU has no FMA instructions: contraction cannot happen here"; \
    }                                                                                     \
  } while (0)

bool cpu_has_fma() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("fma");
#else
  return true;
#endif
}

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

using DotFn = float (*)(const void*, const float*, std::int64_t);

// Rows of `cols` normal values quantized by the library; how many of `rows` dot products
// with a normal x give other bits through the contracted copy.
int differing_dots(TensorType type, DotFn exact_dot, DotFn fused_dot, std::int64_t cols, int rows) {
  int differ = 0;
  for (int r = 0; r < rows; ++r) {
    const auto seed = static_cast<std::uint32_t>(r);
    const std::vector<std::uint8_t> w = test::quantize(type, test::normal_values(cols, seed));
    const std::vector<float> x = test::normal_values(cols, seed + 1000);
    const float a = exact_dot(w.data(), x.data(), cols);
    const float b = fused_dot(w.data(), x.data(), cols);
    EXPECT_NEAR(a, b, 1e-4f * (1.0f + std::fabs(a))) << tensor_type_name(type) << " row " << r;
    differ += same_bits(a, b) ? 0 : 1;
  }
  return differ;
}

TEST(FpContract, DotProductsGiveOtherBitsWhenMultiplyAddsAreFused) {
  KVSCOPE_REQUIRE_PROBE_CPU();
  // total += d * qx + m * sx (Q4_1), scale * qx - min * sx (Q4_K), d * sc * dot (Q6_K)
  EXPECT_GT(differing_dots(TensorType::Q4_1, exact::dot_q4_1, fused::dot_q4_1, 1024, 64), 0);
  EXPECT_GT(differing_dots(TensorType::Q4_K, exact::dot_q4_K, fused::dot_q4_K, 1024, 64), 0);
  EXPECT_GT(differing_dots(TensorType::Q6_K, exact::dot_q6_K, fused::dot_q6_K, 1024, 64), 0);
}

// q = (int)(x * (1/d) + 8.5): when x / d lies just below -7.5 the exact product plus 8.5
// stays below 1 (code 0), while the product rounded first on its coarser grid reaches -7.5
// (code 1). Values are swept across that boundary for blocks of many scales.
TEST(FpContract, SymmetricQuantizerPicksOtherCodesWhenMultiplyAddsAreFused) {
  KVSCOPE_REQUIRE_PROBE_CPU();
  int differ = 0;
  for (int k = 0; k < 64; ++k) {
    std::vector<float> x(quants::kQK, 0.0f);
    x[0] = -(1.0f + 0.0137f * static_cast<float>(k));  // the absmax: 1/d = 8 / -x[0]
    const float d = x[0] / -8.0f;
    float v = -7.5f * d;
    for (int step = 0; step < 16; ++step) v = std::nextafter(v, 0.0f);
    for (int step = 0; step < 32; ++step, v = std::nextafter(v, -1.0f)) {
      x[1] = v;
      std::uint8_t a[sizeof(quants::BlockQ4_0)], b[sizeof(quants::BlockQ4_0)];
      exact::quantize_q4_0(x.data(), a, quants::kQK);
      fused::quantize_q4_0(x.data(), b, quants::kQK);
      differ += std::memcmp(a, b, sizeof a) != 0 ? 1 : 0;
    }
  }
  EXPECT_GT(differ, 0);
}

using DequantizeFn = void (*)(const void*, float*, std::int64_t);

// q * d + m and scale * q - min: the product is exact, so a fused multiply-add rounds the
// same sum once, as the unfused code does.
TEST(FpContract, DequantizeGivesTheSameBitsEitherWayItsProductsAreExact) {
  KVSCOPE_REQUIRE_PROBE_CPU();
  const struct {
    TensorType type;
    DequantizeFn exact, fused;
  } cases[] = {{TensorType::Q4_1, exact::dequantize_q4_1, fused::dequantize_q4_1},
               {TensorType::Q4_K, exact::dequantize_q4_K, fused::dequantize_q4_K},
               {TensorType::Q5_K, exact::dequantize_q5_K, fused::dequantize_q5_K}};
  constexpr std::int64_t kCols = 4096;
  for (const auto& c : cases) {
    const std::vector<std::uint8_t> w = test::quantize(c.type, test::normal_values(kCols, 7, 3.0f));
    std::vector<float> a(kCols), b(kCols);
    c.exact(w.data(), a.data(), kCols);
    c.fused(w.data(), b.data(), kCols);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
        << tensor_type_name(c.type);
  }
}

}  // namespace
}  // namespace kvscope
