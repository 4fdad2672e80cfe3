// Percentiles from a Prometheus histogram, computed as PromQL's histogram_quantile() does
// (promql/quantile.go, bucketQuantile): buckets are cumulative counts of observations
// <= le, the last bucket is le="+Inf".
//
//   rank  = q x total count (the +Inf bucket's count)
//   b     = the first bucket whose count >= rank
//   value = start(b) + (le(b) - start(b)) x (rank - count(b-1)) / (count(b) - count(b-1))
//
// with start(b) the previous bucket's le (0 for the first bucket): observations are taken
// as spread evenly inside their bucket. A rank that falls in the +Inf bucket answers the
// largest finite le (nothing better is known); a first bucket with le <= 0 answers its le.
// Buckets with equal le are merged and counts that go down (a scrape that caught a bucket
// mid-update) are raised to the running maximum, as Prometheus does.
#pragma once

#include <optional>
#include <vector>

#include "remote/prometheus_text.h"

namespace kvscope {

struct HistogramBucket {
  double le = 0.0;     // upper bound, +Inf for the last
  double count = 0.0;  // observations <= le (cumulative)
};

// NaN when there is no +Inf bucket, fewer than 2 buckets, no observations or q is NaN;
// -Inf for q < 0, +Inf for q > 1 (as PromQL).
double histogram_quantile(double q, std::vector<HistogramBucket> buckets);

// The observations of `later` that `earlier` had not seen: bucket by bucket later - earlier,
// as rate() over a window before histogram_quantile(). When any count went down (the
// server restarted) `later` alone is returned; when the two have different bucket bounds
// (a restart with another configuration) so is `later`.
std::vector<HistogramBucket> histogram_delta(const std::vector<HistogramBucket>& later,
                                             const std::vector<HistogramBucket>& earlier);

// The buckets of histogram family `family` summed over its label sets (several engines or
// models), sorted by le. Empty when the family has no _bucket samples.
std::vector<HistogramBucket> merged_buckets(const MetricFamily& family);

}  // namespace kvscope
