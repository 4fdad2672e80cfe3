#include "run/kv_host_fit.h"

#include <algorithm>
#include <cmath>

#include "model/model.h"
#include "plan/units.h"
#include "run/engine.h"
#include "run/layer_split.h"
#include "util/error.h"

namespace kvscope {

namespace {

// Bytes of one block in every group: what each more block of context costs, at most.
double bytes_per_block_row(const KvCacheConfig& config) {
  double bytes = 0;
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    bytes += static_cast<double>(kv_group_layout(config, g).block_bytes());
  }
  return bytes;
}

std::string human(double bytes) {
  return bytes >= 0x1p62 ? fmt::format("{:.3g} bytes", bytes)
                         : human_bytes(static_cast<std::int64_t>(bytes));
}

// The bytes of config's pools (n_blocks per full-attention group) and exact-tail copies, as a
// double: the products may pass 2^63 for a context the user typed.
double kv_host_bytes(const KvCacheConfig& config) {
  double bytes = 0;
  const auto pools = kv_group_pool_blocks(config, config.n_blocks);
  for (std::size_t g = 0; g < pools.size(); ++g) {
    if (!kv_group_on_host(config, g)) continue;  // a split's GPU groups are in VRAM
    bytes += static_cast<double>(pools[g]) *
             static_cast<double>(kv_group_layout(config, g).block_bytes());
  }
  return bytes + static_cast<double>(kv_exact_tail_bytes(config, true));
}

// A budget is the user's (or a simulated device's) word: its pages are touched only as they
// are used, so it is not held to the machine's memory here.
bool sized_by_blocks_in_host(const KvCacheConfig& config, std::uint64_t host_bytes) {
  return host_bytes != 0 && config.host_storage && config.n_blocks != 0;
}

}  // namespace

void check_kv_fits_host(const KvCacheConfig& config, std::int64_t sequences,
                        std::uint64_t weight_bytes, std::uint64_t host_bytes) {
  if (!sized_by_blocks_in_host(config, host_bytes)) return;
  const double kv = kv_host_bytes(config);
  const double host = static_cast<double>(host_bytes);
  const double weights = static_cast<double>(weight_bytes);
  if (kv + weights <= host) return;
  sequences = std::max<std::int64_t>(1, sequences);
  // Each block of context costs at most one block in every group (window groups cap lower).
  const double tail = static_cast<double>(kv_exact_tail_bytes(config));
  const double fit = std::floor(std::max(0.0, host - weights - tail) / bytes_per_block_row(config) /
                                static_cast<double>(sequences)) *
                     static_cast<double>(config.block_size);
  throw_error<CapacityError>(
      "a KV cache for {} sequence{} of {} tokens (the context length) needs {}, more than this "
      "machine's {} of memory (the weights take {}): give a shorter context (about {} tokens "
      "fit) or a memory budget",
      sequences, sequences == 1 ? "" : "s", group_digits(config.max_context), human(kv),
      human(host), human(weights), group_digits(static_cast<std::int64_t>(fit)));
}

void check_split_fits_host(const KvCacheConfig& config, const HostSide& cpu,
                           std::uint64_t host_bytes) {
  if (!sized_by_blocks_in_host(config, host_bytes)) return;
  const double kv = kv_host_bytes(config);
  const double weights = static_cast<double>(cpu.weights);
  const double workspace = static_cast<double>(cpu.workspace);
  const double need = weights + kv + workspace;
  if (need <= static_cast<double>(host_bytes)) return;
  throw_error<CapacityError>(
      "the CPU's side of the split (layers {} to {} of {}) needs {}: its weights {}, its KV "
      "cache {} ({} blocks a layer group, as many as the GPU's side holds) and its workspace "
      "{}; this machine has {} of memory: put more layers on the GPU (--gpu-layers) or give "
      "the KV cache a budget (--kv-budget)",
      cpu.first_layer, cpu.n_layers - 1, cpu.n_layers, human(need), human(weights), human(kv),
      group_digits(config.n_blocks), human(workspace), human(static_cast<double>(host_bytes)));
}

void check_engine_fits_host(const KvCacheConfig& config, const Model& model,
                            const EngineOptions& options, std::int64_t gpu_layers,
                            std::uint64_t host_bytes) {
  if (gpu_layers <= 0) {
    check_kv_fits_host(config, options.default_sequences, model.weight_bytes(), host_bytes);
    return;
  }
  const HostSide cpu{gpu_layers, model.spec().n_layers, cpu_side_weight_bytes(model, gpu_layers),
                     cpu_side_workspace_bytes(model, options)};
  check_split_fits_host(config, cpu, host_bytes);
}

}  // namespace kvscope
