// Whether a KV cache sized by block count fits this machine, checked before anything of it is
// allocated. On the CPU with no budget the pool holds default_sequences full contexts, so a
// huge context length (`run -c 1073741824`) asks for terabytes; the manager's bookkeeping for
// that many blocks alone reached 2.3 GB before the storage was refused.
#pragma once

#include <cstdint>

#include "kv/kv_cache_config.h"

namespace kvscope {

// CapacityError when a config sized by block count (n_blocks, no budget) whose blocks live in
// host memory needs, with the weights, more than `host_bytes` for `sequences` full contexts;
// the message names the context length, what it needs, what the machine has and about how
// long a context fits. Nothing for a budget, or when host_bytes is 0 (unknown).
void check_kv_fits_host(const KvCacheConfig& config, std::int64_t sequences,
                        std::uint64_t weight_bytes, std::uint64_t host_bytes);

}  // namespace kvscope
