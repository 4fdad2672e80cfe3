#include "plan/serving_kv_dtype.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "util/error.h"

namespace kvscope {

std::string_view serving_kv_dtype_name(ServingKvDtype dtype) {
  return dtype == ServingKvDtype::Fp8 ? "fp8" : "auto";
}

std::int64_t serving_kv_element_bytes(ServingKvDtype dtype) {
  return dtype == ServingKvDtype::Fp8 ? 1 : 2;
}

ServingKvDtype parse_serving_kv_dtype(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "auto" || s == "f16" || s == "fp16" || s == "bf16") return ServingKvDtype::Auto;
  if (s == "fp8" || s == "fp8_e4m3" || s == "fp8_e5m2") return ServingKvDtype::Fp8;
  throw_error<UsageError>(
      "unknown KV cache dtype \"{}\"; known: auto (f16, fp16, bf16), fp8 "
      "(fp8_e4m3, fp8_e5m2)",
      text);
}

KvCacheConfig serving_kv_config(const ModelSpec& spec, std::int64_t n_layers,
                                std::int64_t n_kv_heads, ServingKvDtype dtype,
                                std::int64_t block_size) {
  KvCacheConfig config;
  config.groups = uniform_layer_groups(n_layers, KvDtype::F16, spec.sliding_window);
  config.groups[0].v_dtype = KvDtype::F16;
  config.n_kv_heads = n_kv_heads;
  // fp8: an f16 block of half the head_dim has exactly the fp8 block's bytes (header).
  if (dtype == ServingKvDtype::Fp8 && spec.head_dim % 2 != 0) {
    throw_error<UsageError>("fp8 KV cache: head_dim {} is odd", spec.head_dim);
  }
  config.head_dim = dtype == ServingKvDtype::Fp8 ? spec.head_dim / 2 : spec.head_dim;
  config.block_size = block_size;
  config.max_context = spec.context_length;
  return config;
}

}  // namespace kvscope
