#include "kv/kv_bytes.h"

#include "kv/format/kv_slot_writer.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_cache_observer.h"
#include "util/error.h"

namespace kvscope {

bool KvBytes::has_host_storage() const {
  return kv_->config().host_storage;
}

bool KvBytes::has_host_storage(std::int64_t group) const {
  return kv_->group_at(group).storage.has_value();
}

const std::uint8_t* KvBytes::block_data(std::int64_t group, BlockId block) const {
  const auto& storage = kv_->group_at(group).storage;
  if (!storage) {
    throw_error<UsageError>("KV cache: block bytes requested but the cache has no host storage");
  }
  return storage->block(block);
}

std::uint8_t* KvBytesWriter::block_data(std::int64_t group, BlockId block) {
  return const_cast<std::uint8_t*>(KvBytes::block_data(group, block));
}

void KvBytesWriter::write_token(SeqId seq, std::int64_t layer, std::int64_t pos, const float* k,
                                const float* v, bool measure_error) {
  KvCacheManager& kv = *mutable_kv_;
  const std::int64_t group = kv.group_of_layer(layer);
  const std::int64_t li = kv.layer_in_group(layer);
  const KvSlot s = kv.slot(seq, group, pos);
  const std::int32_t refs = kv.pool(group).refcount(s.block);
  if (refs > 1) {
    throw_error<UsageError>(
        "KV cache: write of sequence {} position {} into block {} shared by {} sequences", seq, pos,
        s.block, refs);
  }
  const KvBlockLayout& l = kv.layout(group);
  std::uint8_t* base = block_data(group, s.block);
  kv_write_slot(l, base, li, s.slot, k, v);
  if (auto& tail = kv.group_at(group).tail) {
    if (std::uint8_t* exact = tail->shadow(s.block)) {
      kv_write_slot(tail->layout(), exact, li, s.slot, k, v);
    }
  }
  if (measure_error && kv.observer() != nullptr) {
    kv.observer()->record_quant_error(layer, kv_slot_quant_error(l, KvSide::K, base, li, s.slot, k),
                                      kv_slot_quant_error(l, KvSide::V, base, li, s.slot, v));
  }
}

}  // namespace kvscope
