#include "util/stats.h"

#include <vector>

#include <gtest/gtest.h>

namespace kvscope {
namespace {

TEST(Median, OfNoSamplesIsZero) {
  EXPECT_EQ(median({}), 0.0);
}

TEST(Median, OfAnOddCountIsTheMiddleSample) {
  const std::vector<double> v{5.0, 1.0, 3.0};
  EXPECT_EQ(median(v), 3.0);
  EXPECT_EQ(median(std::vector<double>{7.5}), 7.5);
}

TEST(Median, OfAnEvenCountIsTheMeanOfTheTwoMiddleSamples) {
  EXPECT_EQ(median(std::vector<double>{4.0, 1.0, 3.0, 10.0}), 3.5);
  EXPECT_EQ(median(std::vector<double>{2.0, 1.0}), 1.5);
}

TEST(Median, IsNotMovedByOneOutlier) {
  EXPECT_EQ(median(std::vector<double>{10.0, 11.0, 12.0, 1e9, 9.0}), 11.0);
}

TEST(Median, LeavesTheSamplesInTheirOrder) {
  const std::vector<double> v{3.0, 1.0, 2.0};
  median(v);
  EXPECT_EQ(v, (std::vector<double>{3.0, 1.0, 2.0}));
}

}  // namespace
}  // namespace kvscope
