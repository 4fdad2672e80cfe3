// The bytes of a KvCacheManager's blocks, as the backends read and write them. The manager
// keeps the bookkeeping (which block holds which positions, who shares it); this view is
// the only way to the bytes themselves:
//   a group's blocks  [n_blocks][KvBlockLayout::block_bytes()] in host storage (absent when
//                     a device backend holds them: block_data throws UsageError)
//   exact-tail copies the fp16 shadows of the newest blocks (exact_tail.h), written with
//                     every token that lands in a block that has one
// Obtain one from KvCacheManager::bytes(); it holds a pointer to the manager and is valid
// while the manager lives. Quantization error measured by write_token goes to the
// manager's observer (kv_cache_observer.h), when it has one.
#pragma once

#include <cstdint>

#include "kv/kv_ids.h"

namespace kvscope {

class KvCacheManager;

class KvBytes {
 public:
  explicit KvBytes(const KvCacheManager& kv) : kv_(&kv) {}

  bool has_host_storage() const;
  // Whether one group's bytes are in host memory (a split model's GPU groups are not).
  bool has_host_storage(std::int64_t group) const;
  // A block's bytes (KvBlockLayout). UsageError without host storage.
  const std::uint8_t* block_data(std::int64_t group, BlockId block) const;

 protected:
  const KvCacheManager* kv_;
};

class KvBytesWriter : public KvBytes {
 public:
  explicit KvBytesWriter(KvCacheManager& kv) : KvBytes(kv), mutable_kv_(&kv) {}

  using KvBytes::block_data;
  std::uint8_t* block_data(std::int64_t group, BlockId block);
  // Quantizes one token's K and V of one layer into its slot: k, v are
  // [n_kv_heads][head_dim]. UsageError if the slot's block is shared (grow first). With
  // measure_error, the error against k and v goes to the manager's observer. A block with
  // an exact-tail copy gets the token in fp16 there too.
  void write_token(SeqId seq, std::int64_t layer, std::int64_t pos, const float* k, const float* v,
                   bool measure_error = false);

 private:
  KvCacheManager* mutable_kv_;
};

}  // namespace kvscope
