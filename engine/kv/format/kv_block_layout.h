// Where K and V live inside one physical block of a layer group. The CPU decoder, the
// CUDA kernels and the copy-on-write copy all address block bytes through this struct, so
// host and device storage share one layout.
//
// A block holds `block_size` token slots of K and V for every layer of its group and every
// KV head. Per layer l (0-based inside the group), back to back:
//
//   K data    [n_kv_heads][block_size][k_data_stride bytes]   (kv_format.h vector data)
//   K scales  [n_kv_heads][block_size][k_scales_per_vector]   fp16 (absent for F16)
//   V data    [n_kv_heads][block_size][v_data_stride bytes]
//   V scales  [n_kv_heads][block_size][v_scales_per_vector]   fp16
//   K offsets [n_kv_heads][head_dim]                          fp16, only for Int4 K (offset
//             int4, kv_format.h): fp16 of the block's first key, written with slot 0
//
// and the layers follow each other: block = [n_layers][layer_bytes]. One KV head's keys for
// all slots of a block are contiguous, so the attention loop over a block streams memory.
// Every section has an even size, so with a 2-byte aligned block base every fp16 value is
// aligned. There is no padding between sections:
//   layer_bytes == kv_bytes_per_block_per_layer(k, v, heads, dim, block_size)
//   block_bytes == n_layers * layer_bytes
// The offsets live inside the block, so copy-on-write, swapping and freeing a block carry
// them with its keys.
#pragma once

#include <cstdint>

#include "kv/format/kv_format.h"

namespace kvscope {

struct KvBlockLayout {
  KvDtype k_dtype = KvDtype::F16;
  KvDtype v_dtype = KvDtype::F16;
  std::int64_t n_layers = 0;  // layers in the group
  std::int64_t n_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t block_size = 0;  // token slots per block

  // Validates the dimensions (UsageError) and computes the derived sizes.
  static KvBlockLayout make(KvDtype k_dtype, KvDtype v_dtype, std::int64_t n_layers,
                            std::int64_t n_kv_heads, std::int64_t head_dim,
                            std::int64_t block_size);

  KvDtype dtype(KvSide side) const { return side == KvSide::K ? k_dtype : v_dtype; }

  // Bytes of one vector's data, and fp16 scales per vector, for a side.
  std::int64_t data_stride(KvSide side) const { return side == KvSide::K ? k_stride_ : v_stride_; }
  std::int64_t scales_per_vector(KvSide side) const {
    return side == KvSide::K ? k_scales_ : v_scales_;
  }

  std::int64_t layer_bytes() const { return layer_bytes_; }
  std::int64_t block_bytes() const { return layer_bytes_ * n_layers; }

  // Byte offsets from the block base of the vector (layer, head, slot) of a side.
  std::int64_t data_offset(KvSide side, std::int64_t layer, std::int64_t head,
                           std::int64_t slot) const {
    const std::int64_t section = side == KvSide::K ? 0 : v_data_offset_;
    return layer * layer_bytes_ + section + (head * block_size + slot) * data_stride(side);
  }
  std::int64_t scales_offset(KvSide side, std::int64_t layer, std::int64_t head,
                             std::int64_t slot) const {
    const std::int64_t section = side == KvSide::K ? k_scales_offset_ : v_scales_offset_;
    return layer * layer_bytes_ + section +
           (head * block_size + slot) * 2 * scales_per_vector(side);
  }

  // The K offsets of (layer, head): [head_dim] fp16. Only Int4 K has them; for other K
  // dtypes the offset is where the section would start (the end of the layer's bytes).
  std::int64_t k_offsets_offset(std::int64_t layer, std::int64_t head) const {
    return layer * layer_bytes_ + k_offsets_offset_ + head * head_dim * 2;
  }
  std::uint16_t* k_offsets(std::uint8_t* block, std::int64_t layer, std::int64_t head) const {
    return reinterpret_cast<std::uint16_t*>(block + k_offsets_offset(layer, head));
  }
  const std::uint16_t* k_offsets(const std::uint8_t* block, std::int64_t layer,
                                 std::int64_t head) const {
    return reinterpret_cast<const std::uint16_t*>(block + k_offsets_offset(layer, head));
  }

  // Pointers into a block's bytes. The scale pointer is valid (and 2-byte aligned when
  // `block` is) even for F16, where there are no scales to read.
  std::uint8_t* data(std::uint8_t* block, KvSide side, std::int64_t layer, std::int64_t head,
                     std::int64_t slot) const {
    return block + data_offset(side, layer, head, slot);
  }
  const std::uint8_t* data(const std::uint8_t* block, KvSide side, std::int64_t layer,
                           std::int64_t head, std::int64_t slot) const {
    return block + data_offset(side, layer, head, slot);
  }
  std::uint16_t* scales(std::uint8_t* block, KvSide side, std::int64_t layer, std::int64_t head,
                        std::int64_t slot) const {
    return reinterpret_cast<std::uint16_t*>(block + scales_offset(side, layer, head, slot));
  }
  const std::uint16_t* scales(const std::uint8_t* block, KvSide side, std::int64_t layer,
                              std::int64_t head, std::int64_t slot) const {
    return reinterpret_cast<const std::uint16_t*>(block + scales_offset(side, layer, head, slot));
  }

 private:
  std::int64_t k_stride_ = 0;
  std::int64_t v_stride_ = 0;
  std::int64_t k_scales_ = 0;
  std::int64_t v_scales_ = 0;
  std::int64_t k_scales_offset_ = 0;  // offsets inside one layer's bytes
  std::int64_t v_data_offset_ = 0;
  std::int64_t v_scales_offset_ = 0;
  std::int64_t k_offsets_offset_ = 0;
  std::int64_t layer_bytes_ = 0;
};

}  // namespace kvscope
