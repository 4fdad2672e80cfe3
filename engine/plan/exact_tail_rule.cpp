#include "plan/exact_tail_rule.h"

#include <algorithm>

namespace kvscope {

void apply_exact_tail(KvCacheConfig& c, std::int64_t tail, std::int64_t sequences,
                      std::int64_t step_tokens) {
  c.exact_tail_blocks = c.exact_tail_shadows = 0;
  bool quantized = false;
  for (const LayerGroupConfig& g : c.groups) {
    quantized = quantized || g.k_dtype != KvDtype::F16 || g.v_dtype != KvDtype::F16;
  }
  if (tail <= 0 || !quantized) return;
  const std::int64_t bs = std::max<std::int64_t>(1, c.block_size);
  c.exact_tail_blocks = tail;
  c.exact_tail_shadows = std::max<std::int64_t>(1, sequences) * (tail + 1) +
                         (std::max<std::int64_t>(0, step_tokens) + bs - 1) / bs;
  if (c.n_blocks > 0)
    c.exact_tail_shadows = std::min(c.exact_tail_shadows, c.n_blocks);  // one each
  if (c.budget_bytes > 0) {
    KvCacheConfig one = c;
    one.exact_tail_shadows = 1;
    const std::int64_t afford = c.budget_bytes / 4 / kv_exact_tail_bytes(one);
    c.exact_tail_shadows = std::min(c.exact_tail_shadows, afford);
  }
  if (c.exact_tail_shadows < tail + 1) c.exact_tail_blocks = c.exact_tail_shadows = 0;
}

}  // namespace kvscope
