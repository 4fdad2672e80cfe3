// The newest blocks of each sequence kept a second time, in fp16, for a layer group whose K
// or V is quantized. Attention weighs the most recent tokens most, and their quantization
// error is most of int4's cost: a query that reads its own block and the one before exactly
// loses most of what int4 costs (the README's KV cache table measures it on SmolLM2).
//
// The quantized block stays what the block table points at, so prefix sharing,
// copy-on-write, sliding windows and the pool's bytes work as before; a pool block may
// also carry an fp16 copy (a "shadow") from a small fixed set:
//   shadows    [n_shadows][f16 block bytes], each laid out by layout(): the group's shape
//              with F16 K and V; held here (host_bytes) or by a device backend, which
//              follows the same shadow indices (shadow_index)
//   shadow_of  [n_pool_blocks] each pool block's shadow, or -1
// A query at position p reads block b from its shadow when reads_exact(b, p) and the block
// has one, else from the quantized block. A block gets a shadow when a sequence appends it
// (when none is free it is read quantized: less exact, never wrong), keeps it while it is
// among the blocks the sequence's next query reads exactly, and loses it when it falls
// behind or is freed. Copy-on-write copies the shadow with the block.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kv/block_table.h"
#include "kv/format/kv_block_layout.h"
#include "kv/kv_ids.h"
#include "kv/kv_storage.h"

namespace kvscope {

class ExactTail {
 public:
  // layout: the group's quantized layout (its shape is reused with F16 sides). host_bytes:
  // the shadows' bytes live here (false: only the bookkeeping; a device holds the bytes).
  ExactTail(std::int64_t n_pool_blocks, std::int64_t n_shadows, std::int64_t tail_blocks,
            const KvBlockLayout& layout, bool host_bytes = true);

  std::int64_t tail_blocks() const { return tail_blocks_; }
  const KvBlockLayout& layout() const { return layout_; }
  std::int64_t n_shadows() const { return n_shadows_; }
  std::int64_t n_free() const { return static_cast<std::int64_t>(free_.size()); }

  // Whether a query at query_pos reads logical block `block` exactly (when it has a shadow).
  bool reads_exact(std::int64_t block, std::int64_t query_pos) const {
    return block > query_pos / layout_.block_size - tail_blocks_;
  }

  // The block's shadow index in [0, n_shadows), or -1 when it has none.
  std::int32_t shadow_index(BlockId block) const;
  // The block's fp16 copy, or nullptr (also when the bytes are not held here).
  const std::uint8_t* shadow(BlockId block) const;
  std::uint8_t* shadow(BlockId block);
  // All shadows' bytes [n_shadows][layout().block_bytes()], or nullptr when not held here.
  const std::uint8_t* shadow_bytes() const { return storage_ ? storage_->block(0) : nullptr; }

  // Gives a block a shadow if one is free and it has none.
  void attach(BlockId block);
  // Returns the block's shadow to the free set (nothing when it has none).
  void detach(BlockId block);
  // Copy-on-write: when src has a shadow, dst gets one with the same bytes.
  void copy(BlockId src, BlockId dst);
  // Detaches the shadows of table's blocks that no query at next_pos or later reads exactly.
  void trim(const BlockTable& table, std::int64_t next_pos);

 private:
  std::int32_t& shadow_slot(BlockId block);

  std::int64_t tail_blocks_;
  std::int64_t n_shadows_;
  KvBlockLayout layout_;
  std::optional<KvStorage> storage_;     // [n_shadows][f16 block bytes] when host_bytes
  std::vector<std::int32_t> shadow_of_;  // [n_pool_blocks] shadow index or -1
  std::vector<std::int32_t> free_;       // free shadow indices, popped from the back
};

}  // namespace kvscope
