// Whether a KV cache sized by block count fits this machine, checked before anything of it is
// allocated. On the CPU with no budget the pool holds default_sequences full contexts, so a
// huge context length (`run -c 1073741824`) asks for terabytes; the manager's bookkeeping for
// that many blocks alone reached 2.3 GB before the storage was refused. A model split between
// GPU and CPU (run/split_backend.h) keeps only its CPU side in host memory: that side is what
// is checked.
#pragma once

#include <cstdint>

#include "kv/kv_cache_config.h"

namespace kvscope {

class Model;
struct EngineOptions;

// CapacityError when a config sized by block count (n_blocks, no budget) whose blocks live in
// host memory needs, with the weights, more than `host_bytes` for `sequences` full contexts;
// the message names the context length, what it needs, what the machine has and about how
// long a context fits. Nothing for a budget, or when host_bytes is 0 (unknown).
void check_kv_fits_host(const KvCacheConfig& config, std::int64_t sequences,
                        std::uint64_t weight_bytes, std::uint64_t host_bytes);

// What a split's CPU side holds in host memory besides its KV pools.
struct HostSide {
  std::int64_t first_layer = 0;  // the CPU runs layers [first_layer, n_layers)
  std::int64_t n_layers = 0;
  std::uint64_t weights = 0;  // the token table, its layers and the output head
  std::int64_t workspace = 0;
};

// CapacityError when a split's CPU side needs more than `host_bytes`: its weights, the pools of
// config's host groups (n_blocks each, window groups their cap, with any exact tail) and its
// workspace; the message names what the side needs, of what, and what the machine has. The
// GPU's groups are not counted (they are in device memory), nor the GPU's layers' weights.
// Nothing for a budget or when host_bytes is 0, as above.
void check_split_fits_host(const KvCacheConfig& config, const HostSide& cpu,
                           std::uint64_t host_bytes);

// The check Engine::init runs on its cache config before building the manager: with
// gpu_layers > 0 (a split, run/layer_split.h) its CPU side, else the whole cache beside the
// whole model's weights for options.default_sequences contexts.
void check_engine_fits_host(const KvCacheConfig& config, const Model& model,
                            const EngineOptions& options, std::int64_t gpu_layers,
                            std::uint64_t host_bytes);

}  // namespace kvscope
