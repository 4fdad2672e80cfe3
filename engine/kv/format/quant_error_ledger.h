// Per model layer, the running quantization-error sums of K and of V (quant_error.h): what
// write_token measures on the CPU, or a device backend measures itself, added up until a
// reset. The live panel and the quantization demo read them through the cache snapshot.
#pragma once

#include <cstdint>
#include <vector>

#include "kv/format/quant_error.h"

namespace kvscope {

class QuantErrorLedger {
 public:
  explicit QuantErrorLedger(std::int64_t n_layers = 0);

  std::int64_t n_layers() const { return static_cast<std::int64_t>(k_.size()); }
  // Adds one measurement of a layer. UsageError for a layer out of range.
  void record(std::int64_t layer, const QuantErrorSums& k, const QuantErrorSums& v);
  // Back to no measurements.
  void reset();
  const QuantErrorSums& k(std::int64_t layer) const;
  const QuantErrorSums& v(std::int64_t layer) const;

 private:
  std::size_t index(std::int64_t layer) const;

  std::vector<QuantErrorSums> k_;  // [n_layers]
  std::vector<QuantErrorSums> v_;  // [n_layers]
};

}  // namespace kvscope
