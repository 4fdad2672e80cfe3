#include "kv/format/quant_error_ledger.h"

#include <algorithm>

#include "util/error.h"

namespace kvscope {

QuantErrorLedger::QuantErrorLedger(std::int64_t n_layers)
    : k_(static_cast<std::size_t>(n_layers)), v_(static_cast<std::size_t>(n_layers)) {}

std::size_t QuantErrorLedger::index(std::int64_t layer) const {
  if (layer < 0 || layer >= n_layers()) {
    throw_error<UsageError>("KV cache: layer {} out of range [0, {})", layer, n_layers());
  }
  return static_cast<std::size_t>(layer);
}

void QuantErrorLedger::record(std::int64_t layer, const QuantErrorSums& k,
                              const QuantErrorSums& v) {
  const std::size_t i = index(layer);
  k_[i] += k;
  v_[i] += v;
}

void QuantErrorLedger::reset() {
  std::fill(k_.begin(), k_.end(), QuantErrorSums{});
  std::fill(v_.begin(), v_.end(), QuantErrorSums{});
}

const QuantErrorSums& QuantErrorLedger::k(std::int64_t layer) const {
  return k_[index(layer)];
}

const QuantErrorSums& QuantErrorLedger::v(std::int64_t layer) const {
  return v_[index(layer)];
}

}  // namespace kvscope
