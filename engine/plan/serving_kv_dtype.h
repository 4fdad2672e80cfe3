// The KV cache dtype of a serving plan, as vLLM's --kv-cache-dtype names it. This is a
// planner-only type: KvDtype (kv/format) is what the engine allocates and has no fp8, so
// nothing here can make the engine build an fp8 pool.
//
//   auto  the model's dtype, fp16 / bf16: 2 bytes per element (the engine's KvDtype::F16)
//   fp8   fp8_e4m3 / fp8_e5m2: 1 byte per element. vLLM keeps one float scale per layer
//         (k_scale, v_scale) outside the blocks, so a block holds only the elements.
//
// Bytes come from the allocator's own function: an fp8 block of head_dim d is priced as
// kv_bytes_per_block_per_layer(F16, F16, heads, d / 2, block_size), since an fp16 element
// is exactly two fp8 elements and neither format stores per-vector scales.
#pragma once

#include <cstdint>
#include <string_view>

#include "kv/kv_cache_config.h"
#include "model/model_spec.h"

namespace kvscope {

enum class ServingKvDtype : std::uint8_t { Auto, Fp8 };

// "auto", "fp8": the spelling vLLM's --kv-cache-dtype takes.
std::string_view serving_kv_dtype_name(ServingKvDtype dtype);
// Bytes of one K or V element: 2 for auto, 1 for fp8.
std::int64_t serving_kv_element_bytes(ServingKvDtype dtype);
// Accepts "auto" (also "f16", "fp16", "bf16"), "fp8" (also "fp8_e4m3", "fp8_e5m2"), any
// case. UsageError naming the text and the accepted names.
ServingKvDtype parse_serving_kv_dtype(std::string_view text);

// The cache of `n_layers` layers with `n_kv_heads` KV heads of the spec's head_dim, priced
// in `dtype` (see above), one full-attention or sliding group as the spec says, blocks of
// block_size tokens, max_context = the spec's context length.
KvCacheConfig serving_kv_config(const ModelSpec& spec, std::int64_t n_layers,
                                std::int64_t n_kv_heads, ServingKvDtype dtype,
                                std::int64_t block_size);

}  // namespace kvscope
