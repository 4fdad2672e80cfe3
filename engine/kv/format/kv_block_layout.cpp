#include "kv/format/kv_block_layout.h"

#include "util/error.h"

namespace kvscope {

KvBlockLayout KvBlockLayout::make(KvDtype k_dtype, KvDtype v_dtype, std::int64_t n_layers,
                                  std::int64_t n_kv_heads, std::int64_t head_dim,
                                  std::int64_t block_size) {
  constexpr std::int64_t kMaxBlockSize = std::int64_t{1} << 20;
  constexpr std::int64_t kMaxLayers = std::int64_t{1} << 16;
  constexpr std::int64_t kMaxBlockBytes = std::int64_t{1} << 40;
  if (block_size < 1 || block_size > kMaxBlockSize) {
    throw_error<UsageError>("KV cache: block_size {} out of range [1, {}]", block_size,
                            kMaxBlockSize);
  }
  if (n_layers < 1 || n_layers > kMaxLayers) {
    throw_error<UsageError>("KV cache: {} layers in a layer group, expected [1, {}]", n_layers,
                            kMaxLayers);
  }
  // Validates n_kv_heads and head_dim and bounds the block's size.
  const std::int64_t per_layer =
      kv_bytes_per_block_per_layer(k_dtype, v_dtype, n_kv_heads, head_dim, block_size);
  if (per_layer > kMaxBlockBytes / n_layers) {
    throw_error<UsageError>(
        "KV cache: a block of {} tokens x {} layers x {} bytes per block per layer exceeds {} "
        "bytes",
        block_size, n_layers, per_layer, kMaxBlockBytes);
  }

  KvBlockLayout l;
  l.k_dtype = k_dtype;
  l.v_dtype = v_dtype;
  l.n_layers = n_layers;
  l.n_kv_heads = n_kv_heads;
  l.head_dim = head_dim;
  l.block_size = block_size;
  l.k_stride_ = kv_data_bytes_per_vector(k_dtype, head_dim);
  l.v_stride_ = kv_data_bytes_per_vector(v_dtype, head_dim);
  l.k_scales_ = kv_scales_per_vector(KvSide::K, k_dtype, head_dim);
  l.v_scales_ = kv_scales_per_vector(KvSide::V, v_dtype, head_dim);
  const std::int64_t vectors = n_kv_heads * block_size;  // per side per layer
  l.k_scales_offset_ = vectors * l.k_stride_;
  l.v_data_offset_ = l.k_scales_offset_ + vectors * 2 * l.k_scales_;
  l.v_scales_offset_ = l.v_data_offset_ + vectors * l.v_stride_;
  l.k_offsets_offset_ = l.v_scales_offset_ + vectors * 2 * l.v_scales_;
  l.layer_bytes_ =
      l.k_offsets_offset_ + kv_block_offset_bytes_per_layer(k_dtype, n_kv_heads, head_dim);
  return l;
}

}  // namespace kvscope
