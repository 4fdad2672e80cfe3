// Summary statistics of benchmark samples: the one median every bench reports.
#pragma once

#include <span>

namespace kvscope {

// The middle sample, or the mean of the two middle samples for an even count; 0 for none.
// A median, not a mean, so one run disturbed by other load does not move the result.
double median(std::span<const double> samples);

}  // namespace kvscope
