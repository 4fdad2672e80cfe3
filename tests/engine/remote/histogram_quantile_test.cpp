#include "remote/histogram_quantile.h"

#include <gtest/gtest.h>

#include <cmath>

#include "remote/watch_series.h"

namespace kvscope {
namespace {

constexpr double kInf = INFINITY;

// 10 observations in (0,1], 10 in (1,2], 20 in (2,4], none above.
const std::vector<HistogramBucket> kBuckets = {{1, 10}, {2, 20}, {4, 40}, {kInf, 40}};

TEST(HistogramQuantile, InterpolatesLinearlyInsideTheBucketAsPromQl) {
  EXPECT_DOUBLE_EQ(histogram_quantile(0.25, kBuckets), 1.0);  // rank 10: end of bucket 1
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, kBuckets), 2.0);   // rank 20: end of bucket 2
  EXPECT_DOUBLE_EQ(histogram_quantile(0.75, kBuckets), 3.0);  // rank 30: 2 + 2 x 10/20
  EXPECT_DOUBLE_EQ(histogram_quantile(0.1, kBuckets), 0.4);   // rank 4: 0 + 1 x 4/10
  EXPECT_DOUBLE_EQ(histogram_quantile(0.0, kBuckets), 0.0);
  EXPECT_DOUBLE_EQ(histogram_quantile(1.0, kBuckets), 4.0);
}

TEST(HistogramQuantile, ARankInTheInfBucketAnswersTheLargestFiniteBound) {
  EXPECT_DOUBLE_EQ(histogram_quantile(0.9, {{1, 10}, {kInf, 20}}), 1.0);
}

TEST(HistogramQuantile, SortsMergesAndRepairsBucketsAsPrometheus) {
  // out of order, a duplicate bound (two label sets), one count lower than the one before
  const std::vector<HistogramBucket> messy = {{kInf, 40}, {2, 18}, {1, 5},
                                              {1, 5},     {4, 40}, {3, 17}};
  // sorted and merged: 1:10, 2:18, 3:17 -> 18, 4:40, inf:40; rank 30 in (3,4]: 3 + 12/22
  EXPECT_DOUBLE_EQ(histogram_quantile(0.75, messy), 3.0 + 12.0 / 22.0);
}

TEST(HistogramQuantile, NothingToTellIsNaNAndQOutsideZeroOneIsInfinite) {
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, {{1, 0}, {kInf, 0}})));  // no observations
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, {{1, 3}, {2, 5}})));     // no +Inf bucket
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, {{kInf, 5}})));          // one bucket
  EXPECT_TRUE(std::isnan(histogram_quantile(NAN, kBuckets)));
  EXPECT_EQ(histogram_quantile(-0.1, kBuckets), -kInf);
  EXPECT_EQ(histogram_quantile(1.1, kBuckets), kInf);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, {{-1, 4}, {kInf, 4}}), -1.0);  // le <= 0 first
}

TEST(HistogramQuantile, DeltaKeepsTheWindowAndAResetKeepsTheLaterHistogram) {
  const std::vector<HistogramBucket> later = {{1, 15}, {2, 30}, {kInf, 31}};
  const std::vector<HistogramBucket> earlier = {{1, 10}, {2, 20}, {kInf, 20}};
  const auto window = histogram_delta(later, earlier);
  ASSERT_EQ(window.size(), 3u);
  EXPECT_EQ(window[0].count, 5);
  EXPECT_EQ(window[1].count, 10);
  EXPECT_EQ(window[2].count, 11);
  const std::vector<HistogramBucket> restarted = {{1, 1}, {2, 2}, {kInf, 2}};
  EXPECT_EQ(histogram_delta(restarted, earlier)[2].count, 2);
  EXPECT_EQ(histogram_delta(later, {{5, 1}, {kInf, 1}}).size(), 3u);  // other bounds
}

TEST(CounterRate, IsTheIncreasePerSecondAndCountsFromZeroAfterAReset) {
  EXPECT_DOUBLE_EQ(*counter_rate(150.0, 100.0, 10.0), 5.0);
  EXPECT_DOUBLE_EQ(*counter_rate(30.0, 100.0, 10.0), 3.0);  // restarted: 0 -> 30
  EXPECT_FALSE(counter_rate(std::nullopt, 100.0, 10.0));
  EXPECT_FALSE(counter_rate(1.0, 0.0, 0.0));
}

}  // namespace
}  // namespace kvscope
