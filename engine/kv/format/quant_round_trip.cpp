#include "kv/format/quant_round_trip.h"

#include <algorithm>

#include "kv/format/kv_rotation.h"
#include "util/error.h"

namespace kvscope {

namespace {

bool is_offset_int4(KvSide side, KvDtype dtype) {
  return side == KvSide::K && dtype == KvDtype::Int4;
}

void add(QuantErrorSums& s, double exact, double stored) {
  const double d = exact - stored;
  s.sq_error += d * d;
  s.sq_exact += exact * exact;
  ++s.count;
}

}  // namespace

QuantRoundTrip kv_quant_round_trip(KvSide side, KvDtype dtype, std::span<const float> values,
                                   std::int64_t head_dim, std::int64_t block_size) {
  const auto n_values = static_cast<std::int64_t>(values.size());
  if (head_dim < 1 || block_size < 1 || n_values == 0 || n_values % head_dim != 0) {
    throw_error<UsageError>(
        "quantization round trip: {} values do not form whole vectors of head_dim {} (block "
        "size {})",
        n_values, head_dim, block_size);
  }
  QuantRoundTrip r;
  r.side = side;
  r.dtype = dtype;
  r.head_dim = head_dim;
  r.n_vectors = n_values / head_dim;
  r.per_channel.resize(static_cast<std::size_t>(head_dim));
  const bool offsets_used = is_offset_int4(side, dtype);
  r.bytes_per_vector =
      static_cast<double>(kv_bytes_per_vector(side, dtype, head_dim)) +
      (offsets_used ? static_cast<double>(kv_block_offset_bytes_per_layer(dtype, 1, head_dim)) /
                          static_cast<double>(block_size)
                    : 0.0);
  // One vector's stored form, reused: data [kv_data_bytes_per_vector], scales
  // [kv_scales_per_vector] fp16, the block's offsets [head_dim] fp16 (Int4 keys), back
  // [head_dim] the dequantized values.
  std::vector<std::uint8_t> data(
      static_cast<std::size_t>(kv_data_bytes_per_vector(dtype, head_dim)));
  std::vector<std::uint16_t> scales(
      static_cast<std::size_t>(kv_scales_per_vector(side, dtype, head_dim)) + 1);
  std::vector<std::uint16_t> offsets(static_cast<std::size_t>(head_dim));
  std::vector<float> back(static_cast<std::size_t>(head_dim));
  // the vector as the cache receives it: in the Hadamard basis for int4 (kv_rotation.h)
  const bool turned = kv_rotated(side, dtype);
  std::vector<float> turned_x(turned ? static_cast<std::size_t>(head_dim) : 0);
  for (std::int64_t v = 0; v < r.n_vectors; ++v) {
    const float* x = values.data() + v * head_dim;
    const float* stored = x;
    if (turned) {
      std::copy(x, x + head_dim, turned_x.begin());
      kv_rotate_rows(turned_x.data(), 1, head_dim);
      stored = turned_x.data();
    }
    if (offsets_used) {
      if (v % block_size == 0) kv_k4_set_offsets(stored, head_dim, offsets.data());
      kv_k4_quantize(stored, offsets.data(), head_dim, data.data(), scales.data());
      kv_k4_dequantize(data.data(), scales.data(), offsets.data(), head_dim, back.data());
    } else {
      kv_quantize(dtype, stored, head_dim, data.data(), scales.data());
      kv_dequantize(dtype, data.data(), scales.data(), head_dim, back.data());
    }
    if (turned) kv_rotate_rows(back.data(), 1, head_dim);  // back to the model's channels
    for (std::size_t c = 0; c < back.size(); ++c) add(r.per_channel[c], x[c], back[c]);
  }
  for (const QuantErrorSums& s : r.per_channel) r.total += s;
  return r;
}

}  // namespace kvscope
