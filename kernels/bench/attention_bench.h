// The device side of `kvscope-cli bench-attention`: the decoder's paged attention kernel
// (launch_paged_attention) timed on a copy of a KV cache the CPU wrote, so the kernel reads
// exactly the bytes, shuffled block table and split count a decode step of the CUDA backend
// would; and, for comparison, each other attention kernel that can run the same layout (the
// fast decode kernel and the generic one, paged_attention_choice.cuh). CUDA-free header: the
// CLI includes it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/kv_ids.h"

namespace kvscope::cuda {

// One attention kernel timed on the bench's layout.
struct AttentionKernelTiming {
  std::string name;                   // "fast" or "generic"
  std::vector<double> samples_us;     // [repetitions] one call each (kernel + split merge)
  double median_us = 0;               // of samples_us
  double achieved_gb_s = 0;           // bytes_read / median_us, in 10^9 bytes a second
  double max_abs_diff_vs_chosen = 0;  // its output against the chosen kernel's (0 for it)
};

struct DeviceAttentionTiming {
  std::vector<double> samples_us;   // [repetitions] the chosen kernel, one call each
  std::vector<float> out;           // [n_heads][head_dim] the chosen kernel's last result
  int n_splits = 1;                 // attention_splits() for this context and device
  std::int64_t l2_flush_bytes = 0;  // written before every timed call
  std::string kernel;               // what launch_paged_attention chose: "fast" or "generic"
  std::string fast_unsupported;     // why the fast kernel cannot run the layout ("" if it can)
  // K and V bytes one call reads: the sequence's held blocks of layer 0, whole (the same
  // count as the CLI's bytes_read: kv_bytes_per_block_per_layer per block).
  std::int64_t bytes_read = 0;
  // The chosen kernel first (its samples are samples_us), then every other kernel that can
  // run this layout, each timed the same way.
  std::vector<AttentionKernelTiming> kernels;
};

// One line per timed kernel: name, median us, GB/s and the fraction of copy_gb_s (a
// device's copy bandwidth, measure_device_copy_bandwidth) that is, and the difference
// against the chosen kernel, e.g.
//   "fast       14.1 us   4531 GB/s  112% of copy  (chosen)".
std::string describe_kernel_timings(const DeviceAttentionTiming& t, double copy_gb_s);

// Copies group 0's pool of `kv` (host storage, one allocation of blocks back to back) to
// `device` and times decode attention of the query q [n_heads][head_dim] at `seq`'s last
// position over layer 0: the block table and positions packed by plan_step as the backend
// packs them, splits from attention_splits with the device's SM count. One warm-up call,
// then `repetitions` calls, each after a memset of twice the L2 cache, so every call reads
// its K and V from device memory; the same again for each other kernel that can run the
// layout. KVSCOPE_ATTENTION_KERNEL=generic makes the generic kernel the chosen one, as it does
// for the decoder. Throws kvscope::Error naming the failing CUDA call (CapacityError when
// the pool does not fit).
DeviceAttentionTiming time_device_paged_attention(const KvCacheManager& kv, SeqId seq, int n_heads,
                                                  std::span<const float> q, int repetitions,
                                                  int device = 0);

}  // namespace kvscope::cuda
