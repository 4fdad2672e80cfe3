#include "sim/trace/sim_random.h"

#include <cmath>
#include <numbers>

namespace kvscope {

double SimRandom::uniform() {
  // The top 53 bits, scaled by 2^-53: every double in [0, 1) on a 2^-53 grid.
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

double SimRandom::uniform_open_zero() {
  return static_cast<double>((engine_() >> 11) + 1) * 0x1.0p-53;
}

double SimRandom::normal() {
  const double u1 = uniform_open_zero();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double SimRandom::exponential(double rate) {
  return -std::log(uniform_open_zero()) / rate;
}

double SimRandom::log_normal(double median, double sigma) {
  return median * std::exp(sigma * normal());
}

}  // namespace kvscope
