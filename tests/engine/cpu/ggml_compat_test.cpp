// ggml_compat: llama.cpp's CPU arithmetic bit for bit. The expected bits below were computed
// by ggml itself (llama.cpp's ggml-cpu, GCC 12, -march=native on an AVX-512 x86-64, the
// build that reproduces ../shared/reference) on the same generated inputs; the portable and
// the AVX2 versions must both give them.
#include "cpu/ggml_compat.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/simd_dispatch.h"
#include "golden_inputs.h"
#include "util/error.h"

namespace kvscope {
namespace {

using test::bits;
using test::fnv;
using test::Lcg;

// Runs fn once with the machine's best version and once with the portable one.
template <typename Fn>
void both_versions(Fn&& fn) {
  fn("dispatched");
  PortableArithmeticScope portable;
  fn("portable");
}

TEST(GgmlCompat, DotIsGgmlVecDotF32BitForBit) {
  const struct {
    int n;
    std::uint32_t expected;
  } cases[] = {
      {8, 0xbed508a2}, {64, 0xc02edeab}, {172, 0xc141e62c}, {200, 0xbfb283be}, {256, 0x4092554c}};
  for (const auto& c : cases) {
    Lcg g(1000 + c.n);
    std::vector<float> x(c.n), y(c.n);
    for (int i = 0; i < c.n; ++i) x[i] = g.next(2.0f), y[i] = g.next(2.0f);
    both_versions([&](const char* how) {
      EXPECT_EQ(bits(ggml_dot_f32(x.data(), y.data(), c.n)), c.expected) << how << " n " << c.n;
    });
  }
}

TEST(GgmlCompat, SgemmDotIsLlamafileTinyBlasBitForBit) {
  // ggml_mul_mat(W [8][k], X [2][k]) through llamafile_sgemm: out[j][i] = W_i . X_j
  const std::uint32_t k64[16] = {0x3faeaf16, 0xbee2d30e, 0xc0225888, 0xc0045450,
                                 0xbf042e8b, 0x40a7f5bc, 0x4092d77d, 0x3f87d444,
                                 0x3ef2f0b1, 0xc052123b, 0xc0178356, 0x401fa2b8,
                                 0x3fcb8948, 0x3fccc434, 0xbf149266, 0x3fede5d6};
  const std::uint32_t k176[16] = {0x3f01a6cc, 0xc026f2b6, 0xc0a4b4b3, 0xc0cda482,
                                  0x407b3cdc, 0xc0d25a7f, 0x408bf576, 0x40d2c605,
                                  0xc0863eeb, 0x40aa7504, 0x4028e780, 0x40dcc408,
                                  0x3ffd4166, 0xbfe08867, 0xc11d08dc, 0x403b0f01};
  for (const int k : {64, 176}) {
    const std::uint32_t* expected = k == 64 ? k64 : k176;
    Lcg g(2000 + k);
    std::vector<float> w(8 * k), x(2 * k);
    for (float& f : w) f = g.next(2.0f);
    for (float& f : x) f = g.next(2.0f);
    ASSERT_TRUE(ggml_mul_mat_uses_sgemm(8, k, 2));
    both_versions([&](const char* how) {
      for (int j = 0; j < 2; ++j) {
        std::vector<float> y(8);
        ggml_mat_vec_f32(w.data(), 8, k, &x[j * k], y.data(), true);
        for (int i = 0; i < 8; ++i) {
          EXPECT_EQ(bits(y[i]), expected[j * 8 + i]) << how << " k " << k << " out " << j << i;
          EXPECT_EQ(bits(ggml_sgemm_dot_f32(&w[i * k], &x[j * k], k)), expected[j * 8 + i]);
        }
      }
    });
  }
}

TEST(GgmlCompat, SgemmIsUsedOnlyForBatchesOfShapesItAccepts) {
  EXPECT_TRUE(ggml_mul_mat_uses_sgemm(64, 64, 2));
  EXPECT_FALSE(ggml_mul_mat_uses_sgemm(64, 64, 1));    // decoding: one row
  EXPECT_FALSE(ggml_mul_mat_uses_sgemm(64, 172, 12));  // cols not a multiple of 16
  EXPECT_FALSE(ggml_mul_mat_uses_sgemm(30, 64, 12));   // rows not a multiple of 4
  std::vector<float> w(20, 1.0f), x(20, 1.0f), y(1);
  EXPECT_THROW(ggml_sgemm_dot_f32(w.data(), x.data(), 20), UsageError);
  EXPECT_THROW(ggml_mat_vec_f32(w.data(), 1, 20, x.data(), y.data(), true), UsageError);
}

TEST(GgmlCompat, MatVecRowsEqualSingleDotsForEveryRowCount) {
  // the AVX2 mat-vec sums 8 rows' leftovers side by side: each row must still be its own dot
  for (const int cols : {1, 7, 64, 100, 172, 333}) {
    for (const int rows : {1, 7, 8, 9, 17, 64}) {
      Lcg g(static_cast<std::uint64_t>(cols * 1000 + rows));
      std::vector<float> w(rows * cols), x(cols), y(rows);
      for (float& f : w) f = g.next(3.0f);
      for (float& f : x) f = g.next(3.0f);
      ggml_mat_vec_f32(w.data(), rows, cols, x.data(), y.data(), false);
      for (int r = 0; r < rows; ++r) {
        const float one = ggml_dot_f32(&w[r * cols], x.data(), cols);
        PortableArithmeticScope portable;
        ASSERT_EQ(bits(y[r]), bits(one)) << cols << " x " << rows << " row " << r;
        ASSERT_EQ(bits(ggml_dot_f32(&w[r * cols], x.data(), cols)), bits(one));
      }
    }
  }
}

TEST(GgmlCompat, SwigluRowIsGgmlVecSwigluBitForBit) {
  const struct {
    int n;
    std::uint64_t fnv;
    std::uint32_t first, second, last;
  } cases[] = {{172, 0x5c71530f6d8360abull, 0x3e26ef99, 0x3c86e2c4, 0xbc002c7f},
               {40, 0x4154853c4b0264c9ull, 0x3f601217, 0xbdf1c911, 0xbc44963c}};
  for (const auto& c : cases) {
    Lcg g(3000 + c.n);
    std::vector<float> gate(2 * c.n), up(2 * c.n);
    for (int i = 0; i < 2 * c.n; ++i) gate[i] = g.next(16.0f), up[i] = g.next(4.0f);
    both_versions([&](const char* how) {
      std::vector<float> out(2 * c.n);
      for (int row = 0; row < 2; ++row) {
        ggml_swiglu_row(&gate[row * c.n], &up[row * c.n], &out[row * c.n], c.n);
      }
      EXPECT_EQ(bits(out[0]), c.first) << how;
      EXPECT_EQ(bits(out[1]), c.second) << how;
      EXPECT_EQ(bits(out.back()), c.last) << how;
      EXPECT_EQ(fnv(out), c.fnv) << how << " n " << c.n;
      // in place (out aliasing gate), as the CPU backend calls it
      std::vector<float> in_place = gate;
      for (int row = 0; row < 2; ++row) {
        ggml_swiglu_row(&in_place[row * c.n], &up[row * c.n], &in_place[row * c.n], c.n);
      }
      EXPECT_EQ(fnv(in_place), c.fnv) << how;
    });
  }
}

TEST(GgmlCompat, RopeIsGgmlRopeExtBitForBit) {
  // ggml_rope_ext on [8 dims][3 heads][4 tokens], base 10000, positions 0, 7, 300, 4095:
  // mode 0 rotates (2i, 2i+1) (llama), mode 2 (i, i+4) (neox)
  const std::uint64_t expected[2] = {0xd6d92b104ca88002ull, 0xe37d5e9421c459d7ull};
  const std::int64_t positions[4] = {0, 7, 300, 4095};
  for (const int neox : {0, 1}) {
    Lcg g(4000 + 2 * neox);
    std::vector<float> x(96);
    for (float& f : x) f = g.next(4.0f);
    const float theta_scale = ggml_rope_theta_scale(10000.0f, 8);
    for (int t = 0; t < 4; ++t) {
      float cos[4], sin[4];
      ggml_rope_angles(positions[t], theta_scale, 1.0f, {}, cos, sin);
      for (int h = 0; h < 3; ++h) {
        float* head = &x[(t * 3 + h) * 8];
        for (int i = 0; i < 4; ++i) {
          ggml_rope_rotate(head[neox ? i : 2 * i], head[neox ? i + 4 : 2 * i + 1], cos[i], sin[i]);
        }
      }
    }
    EXPECT_EQ(fnv(x), expected[neox]) << (neox ? "neox" : "adjacent");
  }
}

TEST(GgmlCompat, RopeAnglesChecksItsSpans) {
  std::vector<float> cos(4), sin(3), factors(2);
  EXPECT_THROW(ggml_rope_angles(1, 0.1f, 1.0f, {}, cos, sin), UsageError);
  sin.resize(4);
  EXPECT_THROW(ggml_rope_angles(1, 0.1f, 1.0f, factors, cos, sin), UsageError);
}

TEST(GgmlCompat, VectorExpIsWithinTwoUlpOfExpAndHandlesTheEdges) {
  for (float x = -87.0f; x < 88.0f; x += 0.0137f) {
    const double want = std::exp(static_cast<double>(x));
    EXPECT_NEAR(ggml_v_expf(x), want, want * 2.5e-7) << x;
  }
  EXPECT_EQ(ggml_v_expf(0.0f), 1.0f);
  EXPECT_EQ(ggml_v_expf(-200.0f), 0.0f);
  EXPECT_EQ(ggml_v_expf(200.0f), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(ggml_v_expf(std::numeric_limits<float>::quiet_NaN())));
}

TEST(GgmlCompat, PortableAndDispatchedVersionsAgreeOnEveryInput) {
  Lcg g(77);
  for (int n = 1; n <= 300; n += 7) {
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) x[i] = g.next(10.0f), y[i] = g.next(0.5f);
    const float dot = ggml_dot_f32(x.data(), y.data(), n);
    std::vector<float> silu(n);
    ggml_swiglu_row(x.data(), y.data(), silu.data(), n);
    float sgemm = 0.0f;
    if (n >= 16) sgemm = ggml_sgemm_dot_f32(x.data(), y.data(), n & ~15);
    PortableArithmeticScope portable;
    EXPECT_EQ(bits(ggml_dot_f32(x.data(), y.data(), n)), bits(dot)) << n;
    std::vector<float> silu_p(n);
    ggml_swiglu_row(x.data(), y.data(), silu_p.data(), n);
    EXPECT_EQ(fnv(silu_p), fnv(silu)) << n;
    if (n >= 16) {
      EXPECT_EQ(bits(ggml_sgemm_dot_f32(x.data(), y.data(), n & ~15)), bits(sgemm)) << n;
    }
  }
  // silu far out, where the vector exponential leaves the normal range (one-by-one lanes)
  std::vector<float> gate = {-150.0f, -90.0f, -88.5f, 0.0f,  1e-30f, 88.5f, 100.0f, -1e-3f,
                             3.0f,    -3.0f,  50.0f,  -50.f, 7.0f,   -7.0f, 0.5f,   -0.5f};
  std::vector<float> up(16, 1.5f), out(16), out_p(16);
  ggml_swiglu_row(gate.data(), up.data(), out.data(), 16);
  PortableArithmeticScope portable;
  ggml_swiglu_row(gate.data(), up.data(), out_p.data(), 16);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(bits(out[i]), bits(out_p[i])) << gate[i];
}

// AVX without FMA (use_avx_alone): SwiGLU and RoPE multiply and add in two roundings, so they
// are checked against the exact values in double rather than bit for bit.
TEST(GgmlCompat, AvxAloneSwigluAndRopeAreTheExactValuesUpToRounding) {
  if (!cpu_has_avx()) GTEST_SKIP() << "this CPU has no AVX";
  const CpuIsaCapScope avx(1);
  ASSERT_TRUE(use_avx_alone());
  Lcg g(91);
  std::vector<float> gate = {-150.0f, -90.0f, -88.5f, 0.0f, 1e-30f, 88.5f, 100.0f, -1e-3f};
  for (int i = 0; i < 300; ++i) gate.push_back(g.next(12.0f));
  const std::vector<float> up(gate.size(), 1.5f);
  std::vector<float> out(gate.size());
  ggml_swiglu_row(gate.data(), up.data(), out.data(), static_cast<std::int64_t>(gate.size()));
  for (std::size_t i = 0; i < gate.size(); ++i) {
    const double x = gate[i], want = x / (1.0 + std::exp(-x)) * 1.5;
    EXPECT_NEAR(out[i], want, 8e-7 * std::abs(want) + 1e-36) << x;  // e^90 overflows: -0
  }
  for (int i = 0; i < 100; ++i) {
    const float a = g.next(4.0f), b = g.next(4.0f), angle = g.next(3.0f);
    float x0 = a, x1 = b;
    ggml_rope_rotate_unfused(x0, x1, std::cos(angle), std::sin(angle));
    const double c = std::cos(angle), s = std::sin(angle);
    EXPECT_NEAR(x0, a * c - b * s, 2e-6);
    EXPECT_NEAR(x1, a * s + b * c, 2e-6);
  }
}

}  // namespace
}  // namespace kvscope
