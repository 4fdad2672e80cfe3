// The shape of one layer's attention: query heads, KV heads (each serving n_heads /
// n_kv_heads query heads, GQA), and the dimension of a head.
#pragma once

#include <cstdint>

namespace kvscope {

struct AttentionShape {
  std::int64_t n_heads = 0;
  std::int64_t n_kv_heads = 0;
  std::int64_t head_dim = 0;
};

}  // namespace kvscope
