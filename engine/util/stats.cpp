#include "util/stats.h"

#include <algorithm>
#include <vector>

namespace kvscope {

double median(std::span<const double> samples) {
  if (samples.empty()) return 0.0;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace kvscope
