// What the live panel watches a KV cache for, kept out of the manager's bookkeeping: the
// quantization error each layer's writes measured (the backends report it through
// KvBytesWriter::write_token, or their own device sums), and the plain-value picture of
// every block (CacheSnapshot), with what a contiguous cache would reserve for the same
// sequences beside it. It only reads the manager, through its public interface.
//
// The engine owns one per cache and attaches it (KvCacheManager::set_observer).
#pragma once

#include <cstdint>

#include "kv/cache_snapshot.h"
#include "kv/contiguous_policy.h"
#include "kv/format/quant_error.h"
#include "kv/format/quant_error_ledger.h"
#include "kv/kv_cache_config.h"

namespace kvscope {

class KvCacheManager;

class KvCacheObserver {
 public:
  explicit KvCacheObserver(const KvCacheConfig& config);

  // Adds a measurement for a layer. UsageError for a layer out of range.
  void record_quant_error(std::int64_t layer, const QuantErrorSums& k, const QuantErrorSums& v) {
    quant_error_.record(layer, k, v);
  }
  void reset_quant_error() { quant_error_.reset(); }
  const QuantErrorSums& quant_error_k(std::int64_t layer) const { return quant_error_.k(layer); }
  const QuantErrorSums& quant_error_v(std::int64_t layer) const { return quant_error_.v(layer); }

  // Walks the pools and block tables once and copies what the panel draws into values.
  CacheSnapshot snapshot(const KvCacheManager& kv) const;

 private:
  QuantErrorLedger quant_error_;
  ContiguousPolicy contiguous_;
};

// The snapshot of a cache nobody measures errors for (the demos' and simulations' caches).
CacheSnapshot snapshot_of(const KvCacheManager& kv);

}  // namespace kvscope
