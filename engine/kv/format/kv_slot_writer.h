// Writing one token's K and V of one layer into its slot of a block, in the block's formats
// (kv_format.h), and measuring what that write lost. KvCacheManager::write_token is the
// caller; the CUDA append kernel writes the same bytes on the device.
//
// With Int4 K (offset int4) the slot-0 key first sets the block's K offsets of its layer
// and every KV head; every key, slot 0's included, is then quantized against them. Slots
// are written in position order, so a block's slot 0 is always written before its others.
#pragma once

#include <cstdint>

#include "kv/format/kv_block_layout.h"
#include "kv/format/quant_error.h"

namespace kvscope {

// Stores k and v ([n_kv_heads][head_dim] each) into (layer, slot) of the block at `block`.
void kv_write_slot(const KvBlockLayout& layout, std::uint8_t* block, std::int64_t layer,
                   std::int64_t slot, const float* k, const float* v);

// The error of one side of a slot kv_write_slot stored from x ([n_kv_heads][head_dim]),
// read back through the side's format (for Int4 K: through the block's offsets).
QuantErrorSums kv_slot_quant_error(const KvBlockLayout& layout, KvSide side,
                                   const std::uint8_t* block, std::int64_t layer, std::int64_t slot,
                                   const float* x);

}  // namespace kvscope
