// The device side of `kvscope-cli bench-attention`: the decoder's paged attention kernel
// (launch_paged_attention) timed on a copy of a KV cache the CPU wrote, so the kernel reads
// exactly the bytes, shuffled block table and split count a decode step of the CUDA backend
// would. CUDA-free header: the CLI includes it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/kv_ids.h"

namespace kvscope::cuda {

struct DeviceAttentionTiming {
  std::vector<double> samples_us;   // [repetitions] one call each, timed with events
  std::vector<float> out;           // [n_heads][head_dim] the last call's result
  int n_splits = 1;                 // attention_splits() for this context and device
  std::int64_t l2_flush_bytes = 0;  // written before every timed call
};

// Copies group 0's pool of `kv` (host storage, one allocation of blocks back to back) to
// `device` and times decode attention of the query q [n_heads][head_dim] at `seq`'s last
// position over layer 0: the block table and positions packed by plan_step as the backend
// packs them, splits from attention_splits with the device's SM count. One warm-up call,
// then `repetitions` calls, each after a memset of twice the L2 cache, so every call reads
// its K and V from device memory. Throws kvscope::Error naming the failing CUDA call
// (CapacityError when the pool does not fit).
DeviceAttentionTiming time_device_paged_attention(const KvCacheManager& kv, SeqId seq, int n_heads,
                                                  std::span<const float> q, int repetitions,
                                                  int device = 0);

}  // namespace kvscope::cuda
