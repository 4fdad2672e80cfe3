// Running sums that measure KV quantization error: the decoder compares what it stores
// with the exact values at write time and the manager accumulates the sums per layer.
#pragma once

#include <cmath>
#include <cstdint>

namespace kvscope {

struct QuantErrorSums {
  double sq_error = 0.0;   // sum of (exact - stored)^2
  double sq_exact = 0.0;   // sum of exact^2
  std::int64_t count = 0;  // values measured

  QuantErrorSums& operator+=(const QuantErrorSums& o) {
    sq_error += o.sq_error;
    sq_exact += o.sq_exact;
    count += o.count;
    return *this;
  }
  // sqrt(mean squared error); 0 before anything was measured.
  double rms_error() const {
    return count > 0 ? std::sqrt(sq_error / static_cast<double>(count)) : 0.0;
  }
  // rms error / rms of the exact values; 0 when the exact values are all 0.
  double relative_rms_error() const {
    return sq_exact > 0.0 ? std::sqrt(sq_error / sq_exact) : 0.0;
  }
};

}  // namespace kvscope
