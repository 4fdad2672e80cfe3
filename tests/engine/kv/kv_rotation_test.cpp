// The Hadamard basis of int4 KV (kv_rotation.h): an orthonormal, symmetric, self-inverse
// transform of each row, so q . k, lengths and weighted sums of values survive it, and the
// outlier channel that sets a 4-bit group's range is spread over the whole head.
#include "kv/format/kv_rotation.h"

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kv/format/kv_format.h"

namespace kvscope {
namespace {

std::vector<float> random_rows(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (float& v : x) v = dist(rng);
  return x;
}

double dot(const float* a, const float* b, std::int64_t n) {
  double s = 0.0;
  for (std::int64_t i = 0; i < n; ++i) s += double{a[i]} * b[i];
  return s;
}

// The butterflies one pair at a time, stage by stage: what kv_rotate_rows must give bit for
// bit (the CUDA kernel follows the same order), however it is vectorized.
void reference_rotate(float* x, std::int64_t hd) {
  for (std::int64_t done = 0; done < hd;) {
    std::int64_t n = 1;
    while (n * 2 <= hd - done) n *= 2;
    float* p = x + done;
    for (std::int64_t h = 1; h < n; h *= 2) {
      for (std::int64_t i = 0; i < n; i += 2 * h) {
        for (std::int64_t j = i; j < i + h; ++j) {
          const float a = p[j], b = p[j + h];
          p[j] = a + b;
          p[j + h] = a - b;
        }
      }
    }
    const float norm = 1.0f / std::sqrt(static_cast<float>(n));
    for (std::int64_t i = 0; i < n; ++i) p[i] *= norm;
    done += n;
  }
}

TEST(KvRotation, GivesTheBitsOfTheButterfliesOneAtATime) {
  for (const std::int64_t hd : {1, 2, 3, 4, 5, 8, 12, 16, 40, 64, 80, 96, 128, 256}) {
    auto x = random_rows(5 * hd, 11u + static_cast<unsigned>(hd));
    for (std::size_t i = 0; i < x.size(); i += 3) x[i] *= 1e4f;  // mixed magnitudes round
    auto want = x;
    for (std::int64_t r = 0; r < 5; ++r) reference_rotate(&want[r * hd], hd);
    kv_rotate_rows(x.data(), 5, hd);
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(std::memcmp(&x[i], &want[i], sizeof(float)), 0)
          << "head_dim " << hd << ", value " << i << ": " << x[i] << " vs " << want[i];
    }
  }
}

TEST(KvRotation, OnlyInt4SidesLiveInTheHadamardBasis) {
  for (const KvSide side : {KvSide::K, KvSide::V}) {
    EXPECT_FALSE(kv_rotated(side, KvDtype::F16));
    EXPECT_FALSE(kv_rotated(side, KvDtype::Int8));
    EXPECT_TRUE(kv_rotated(side, KvDtype::Int4));
  }
}

TEST(KvRotation, MatchesTheHadamardMatrixOfSizeFour) {
  // H_4 / 2 rows: (1 1 1 1), (1 -1 1 -1), (1 1 -1 -1), (1 -1 -1 1)
  std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f};
  kv_rotate_rows(x.data(), 1, 4);
  EXPECT_EQ(x, (std::vector<float>{5.0f, -1.0f, -2.0f, 0.0f}));
}

TEST(KvRotation, IsItsOwnInverseAndKeepsDotProductsForEveryHeadDim) {
  // powers of two, and block-diagonal sizes: 80 = 64 + 16, 40 = 32 + 8, 7 = 4 + 2 + 1
  for (const std::int64_t hd : {1, 2, 7, 8, 40, 64, 80, 96, 128}) {
    const std::int64_t rows = 3;
    const auto x = random_rows(rows * hd, 7u + static_cast<unsigned>(hd));
    auto turned = x;
    kv_rotate_rows(turned.data(), rows, hd);
    for (std::int64_t r = 1; r < rows; ++r) {  // q . k between row 0 and each other row
      EXPECT_NEAR(dot(&turned[0], &turned[r * hd], hd), dot(&x[0], &x[r * hd], hd),
                  1e-5 * dot(&x[0], &x[0], hd) + 1e-5)
          << "head_dim " << hd;
    }
    auto back = turned;
    kv_rotate_rows(back.data(), rows, hd);
    for (std::size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(back[i], x[i], 1e-5f * (1.0f + std::fabs(x[i]))) << "head_dim " << hd;
    }
  }
}

// Why it is there: one outlier channel sets a symmetric group's scale and leaves the other
// 31 values a few levels; turned, the outlier is spread and int4 loses much less.
TEST(KvRotation, SpreadsAnOutlierSoInt4LosesLess) {
  const std::int64_t hd = 64;
  auto x = random_rows(hd, 11u);
  x[5] = 60.0f;  // an outlier channel, as RoPE's low frequencies give keys
  auto turned = x;
  kv_rotate_rows(turned.data(), 1, hd);
  const auto int4_error = [&](const std::vector<float>& v) {
    std::vector<std::uint8_t> data(
        static_cast<std::size_t>(kv_data_bytes_per_vector(KvDtype::Int4, hd)));
    std::vector<std::uint16_t> scales(
        static_cast<std::size_t>(kv_scales_per_vector(KvDtype::Int4, hd)));
    kv_quantize(KvDtype::Int4, v.data(), hd, data.data(), scales.data());
    return kv_quant_sq_error(KvDtype::Int4, v.data(), data.data(), scales.data(), hd);
  };
  EXPECT_LT(int4_error(turned), 0.5 * int4_error(x));
}

}  // namespace
}  // namespace kvscope
