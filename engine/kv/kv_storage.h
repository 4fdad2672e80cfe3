// The host bytes of one layer group's blocks: [n_blocks][block_bytes], laid out per block
// as KvBlockLayout describes. Kept apart from BlockPool (the bookkeeping) so a device
// backend can hold the bytes in GPU memory instead and follow the same block ids.
//
// The memory is 64-byte aligned and left uninitialised (a large simulated-GPU budget only
// costs the pages the cache actually writes); slots are read only after being written.
#pragma once

#include <cstdint>
#include <memory>

#include "kv/kv_ids.h"

namespace kvscope {

class KvStorage {
 public:
  // CapacityError if the host cannot provide n_blocks * block_bytes bytes.
  KvStorage(std::int64_t n_blocks, std::int64_t block_bytes);

  std::int64_t n_blocks() const { return n_blocks_; }
  std::int64_t block_bytes() const { return block_bytes_; }
  std::int64_t size_bytes() const { return n_blocks_ * block_bytes_; }

  // Base of one block's bytes. UsageError for an id outside [0, n_blocks).
  std::uint8_t* block(BlockId id);
  const std::uint8_t* block(BlockId id) const;

  // dst's bytes = src's bytes (copy-on-write).
  void copy_block(BlockId src, BlockId dst);

 private:
  struct AlignedDelete {
    void operator()(std::uint8_t* p) const;
  };

  std::int64_t offset(BlockId id) const;

  std::int64_t n_blocks_;
  std::int64_t block_bytes_;
  std::unique_ptr<std::uint8_t[], AlignedDelete> bytes_;  // [n_blocks][block_bytes]
};

}  // namespace kvscope
