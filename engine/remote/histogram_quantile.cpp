#include "remote/histogram_quantile.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <string>

namespace kvscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Sorted by le, equal bounds merged, counts made non-decreasing.
std::vector<HistogramBucket> normalized(std::vector<HistogramBucket> buckets) {
  std::sort(buckets.begin(), buckets.end(),
            [](const HistogramBucket& a, const HistogramBucket& b) { return a.le < b.le; });
  std::vector<HistogramBucket> out;
  for (const HistogramBucket& b : buckets) {
    if (!out.empty() && out.back().le == b.le) {
      out.back().count += b.count;
    } else {
      out.push_back(b);
    }
  }
  double max = 0.0;
  for (HistogramBucket& b : out) {
    max = std::max(max, b.count);
    b.count = max;
  }
  return out;
}

double parse_le(const std::string& text) {
  if (text == "+Inf" || text == "Inf" || text == "inf" || text == "+inf") return kInf;
  double v = kNaN;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

}  // namespace

double histogram_quantile(double q, std::vector<HistogramBucket> buckets) {
  if (std::isnan(q)) return kNaN;
  if (q < 0) return -kInf;
  if (q > 1) return kInf;
  buckets = normalized(std::move(buckets));
  if (buckets.size() < 2 || !std::isinf(buckets.back().le)) return kNaN;
  const double observations = buckets.back().count;
  if (!(observations > 0)) return kNaN;
  double rank = q * observations;
  std::size_t b = 0;
  while (b + 1 < buckets.size() && buckets[b].count < rank) ++b;
  if (b == buckets.size() - 1) return buckets[b - 1].le;
  if (b == 0 && buckets[0].le <= 0) return buckets[0].le;
  double start = 0.0;
  double count = buckets[b].count;
  if (b > 0) {
    start = buckets[b - 1].le;
    count -= buckets[b - 1].count;
    rank -= buckets[b - 1].count;
  }
  if (count <= 0) return buckets[b].le;
  return start + (buckets[b].le - start) * (rank / count);
}

std::vector<HistogramBucket> histogram_delta(const std::vector<HistogramBucket>& later,
                                             const std::vector<HistogramBucket>& earlier) {
  if (later.size() != earlier.size()) return later;
  std::vector<HistogramBucket> out = later;
  for (std::size_t i = 0; i < later.size(); ++i) {
    if (later[i].le != earlier[i].le || later[i].count < earlier[i].count) return later;
    out[i].count = later[i].count - earlier[i].count;
  }
  return out;
}

std::vector<HistogramBucket> merged_buckets(const MetricFamily& family) {
  std::map<double, double> by_le;
  const std::string bucket_name = family.name + "_bucket";
  for (const MetricSample& s : family.samples) {
    if (s.name != bucket_name) continue;
    const std::string* le = s.label("le");
    if (le == nullptr) continue;
    const double bound = parse_le(*le);
    if (std::isnan(bound) || std::isnan(s.value)) continue;
    by_le[bound] += s.value;
  }
  std::vector<HistogramBucket> out;
  out.reserve(by_le.size());
  for (const auto& [le, count] : by_le) out.push_back({le, count});
  return out;
}

}  // namespace kvscope
