#include "kv/format/synthetic_kv.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "util/error.h"

namespace kvscope {
namespace {

// Sample standard deviation of channel c over all vectors.
double channel_stddev(const SyntheticKv& kv, std::int64_t c) {
  double sum = 0, sq = 0;
  for (std::int64_t v = 0; v < kv.n_vectors; ++v) {
    const double x = kv.values[static_cast<std::size_t>(v * kv.head_dim + c)];
    sum += x;
    sq += x * x;
  }
  const double n = static_cast<double>(kv.n_vectors);
  return std::sqrt(sq / n - (sum / n) * (sum / n));
}

TEST(SyntheticKv, OutlierChannelsAreSpreadEvenlyOverTheVector) {
  EXPECT_EQ(synthetic_outlier_channels(128, 2), (std::vector<std::int64_t>{32, 96}));
  EXPECT_EQ(synthetic_outlier_channels(128, 1), (std::vector<std::int64_t>{64}));
  EXPECT_EQ(synthetic_outlier_channels(128, 4), (std::vector<std::int64_t>{16, 48, 80, 112}));
  EXPECT_EQ(synthetic_outlier_channels(3, 3), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_TRUE(synthetic_outlier_channels(64, 0).empty());
}

TEST(SyntheticKv, OrdinaryChannelsHaveUnitSpreadAndOutliersTheChosenScale) {
  SyntheticKvSpec spec;
  spec.n_vectors = 8192;
  spec.head_dim = 64;
  spec.n_outlier_channels = 2;
  spec.outlier_scale = 12.0f;
  const SyntheticKv kv = make_synthetic_kv(spec);
  ASSERT_EQ(kv.values.size(), std::size_t{8192 * 64});
  ASSERT_EQ(kv.outlier_channels, (std::vector<std::int64_t>{16, 48}));
  for (std::int64_t c = 0; c < 64; ++c) {
    const bool outlier = c == 16 || c == 48;
    // 8192 samples: the sample deviation is within ~2% of the true one (5 sigma < 4%).
    EXPECT_NEAR(channel_stddev(kv, c), outlier ? 12.0 : 1.0, outlier ? 0.5 : 0.04)
        << "channel " << c;
  }
}

TEST(SyntheticKv, SameSeedGivesSameValuesAndAnotherSeedDifferentOnes) {
  SyntheticKvSpec spec;
  spec.n_vectors = 16;
  spec.head_dim = 33;  // odd: the normal pairs straddle vectors
  const SyntheticKv a = make_synthetic_kv(spec);
  EXPECT_EQ(make_synthetic_kv(spec).values, a.values);
  spec.seed = 2;
  EXPECT_NE(make_synthetic_kv(spec).values, a.values);
  for (const float x : a.values) EXPECT_TRUE(std::isfinite(x));
}

TEST(SyntheticKv, BadSpecsAreUsageErrorsNamingTheField) {
  auto message = [](SyntheticKvSpec s) {
    try {
      make_synthetic_kv(s);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SyntheticKvSpec s;
  s.head_dim = 0;
  EXPECT_NE(message(s).find("head_dim 0"), std::string::npos) << message(s);
  s = {};
  s.n_vectors = std::int64_t{1} << 40;
  EXPECT_NE(message(s).find("n_vectors"), std::string::npos) << message(s);
  s = {};
  s.n_outlier_channels = 129;
  EXPECT_NE(message(s).find("n_outlier_channels 129"), std::string::npos) << message(s);
  s = {};
  s.outlier_scale = std::nanf("");
  EXPECT_NE(message(s).find("outlier_scale"), std::string::npos) << message(s);
  s.outlier_scale = -1.0f;
  EXPECT_NE(message(s).find("outlier_scale -1"), std::string::npos) << message(s);
}

}  // namespace
}  // namespace kvscope
