// The quantization error of a set of K or V vectors stored in one KV dtype, measured the
// way the decoder measures it (quantize with the cache's own format, then compare with
// what dequantize gives back) and broken down per channel, so a chart can show which
// channels a format hurts.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/format/kv_format.h"
#include "kv/format/quant_error.h"

namespace kvscope {

struct QuantRoundTrip {
  KvSide side = KvSide::K;
  KvDtype dtype = KvDtype::F16;
  std::int64_t head_dim = 0;
  std::int64_t n_vectors = 0;
  QuantErrorSums total;                     // over every value
  std::vector<QuantErrorSums> per_channel;  // [head_dim]: channel c of every vector
  // Bytes one vector takes in a block: kv_bytes_per_vector(side, dtype, head_dim), plus
  // its share of the block's offsets for Int4 keys (fractional then).
  double bytes_per_vector = 0.0;
};

// values: [n_vectors][head_dim], consecutive tokens of one KV head. Stored as the cache
// stores that side: Int4 vectors in the Hadamard basis (kv_rotation.h), turned back before
// the comparison, so the per-channel error is in the model's channels; Int4 keys are
// offset int4, each run of block_size vectors a block whose first vector sets the offsets
// (kv_k4_set_offsets); everything else uses the symmetric formats (kv_quantize). UsageError when
// head_dim or block_size is < 1, or the values are not a whole, non-zero number of vectors.
QuantRoundTrip kv_quant_round_trip(KvSide side, KvDtype dtype, std::span<const float> values,
                                   std::int64_t head_dim,
                                   std::int64_t block_size = kDefaultKvBlockSize);

}  // namespace kvscope
