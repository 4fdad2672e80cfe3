// The random numbers behind a request trace. std::mt19937_64's output is fixed by the C++
// standard, but std::*_distribution transforms are not (libstdc++, libc++ and MSVC give
// different values for the same seed), so the transforms are written here: the same seed
// gives the same trace with any standard library. The only platform dependence left is
// libm's last-bit rounding of log/exp/cos, which can move a length across a .5 boundary
// in rare cases.
#pragma once

#include <cstdint>
#include <random>

namespace kvscope {

class SimRandom {
 public:
  explicit SimRandom(std::uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Uniform in (0, 1]: safe to take the log of.
  double uniform_open_zero();
  // Standard normal (Box-Muller; one value per call, the second one is dropped so a call
  // always consumes two draws and traces stay aligned when a parameter changes).
  double normal();
  // Exponential with the given rate (mean 1 / rate); rate > 0.
  double exponential(double rate);
  // exp(ln(median) + sigma * normal()): median > 0, sigma >= 0.
  double log_normal(double median, double sigma);

 private:
  std::mt19937_64 engine_;
};

}  // namespace kvscope
