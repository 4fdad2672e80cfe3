// The shape of one layer's attention: query heads, KV heads (each serving n_heads /
// n_kv_heads query heads, GQA), the dimension of a head, and the soft-cap its scores pass
// through before the softmax.
#pragma once

#include <cstdint>

namespace kvscope {

struct AttentionShape {
  std::int64_t n_heads = 0;
  std::int64_t n_kv_heads = 0;
  std::int64_t head_dim = 0;
  // Every scaled score s becomes softcap * tanh(s / softcap) (Gemma 2: 50); 0: off.
  float softcap = 0.0f;
};

}  // namespace kvscope
