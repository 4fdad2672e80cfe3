#include "kv/format/kv_slot_writer.h"

#include "kv/format/kv_format.h"

namespace kvscope {

namespace {

bool offset_int4(const KvBlockLayout& l, KvSide side) {
  return side == KvSide::K && l.k_dtype == KvDtype::Int4;
}

}  // namespace

void kv_write_slot(const KvBlockLayout& l, std::uint8_t* block, std::int64_t layer,
                   std::int64_t slot, const float* k, const float* v) {
  for (std::int64_t h = 0; h < l.n_kv_heads; ++h) {
    const float* kh = k + h * l.head_dim;
    std::uint8_t* k_data = l.data(block, KvSide::K, layer, h, slot);
    std::uint16_t* k_scales = l.scales(block, KvSide::K, layer, h, slot);
    if (offset_int4(l, KvSide::K)) {
      std::uint16_t* offsets = l.k_offsets(block, layer, h);
      if (slot == 0) kv_k4_set_offsets(kh, l.head_dim, offsets);
      kv_k4_quantize(kh, offsets, l.head_dim, k_data, k_scales);
    } else {
      kv_quantize(l.k_dtype, kh, l.head_dim, k_data, k_scales);
    }
    kv_quantize(l.v_dtype, v + h * l.head_dim, l.head_dim, l.data(block, KvSide::V, layer, h, slot),
                l.scales(block, KvSide::V, layer, h, slot));
  }
}

QuantErrorSums kv_slot_quant_error(const KvBlockLayout& l, KvSide side, const std::uint8_t* block,
                                   std::int64_t layer, std::int64_t slot, const float* x) {
  QuantErrorSums sums;
  for (std::int64_t h = 0; h < l.n_kv_heads; ++h) {
    const float* xh = x + h * l.head_dim;
    const std::uint8_t* data = l.data(block, side, layer, h, slot);
    const std::uint16_t* scales = l.scales(block, side, layer, h, slot);
    sums.sq_error +=
        offset_int4(l, side)
            ? kv_k4_sq_error(xh, data, scales, l.k_offsets(block, layer, h), l.head_dim)
            : kv_quant_sq_error(l.dtype(side), xh, data, scales, l.head_dim);
    for (std::int64_t i = 0; i < l.head_dim; ++i) sums.sq_exact += double{xh[i]} * xh[i];
  }
  sums.count = l.n_kv_heads * l.head_dim;
  return sums;
}

}  // namespace kvscope
