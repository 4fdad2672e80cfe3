#include "sim/scenarios/prefix_sharing_scenario.h"

#include "util/error.h"

namespace kvscope {

namespace {

void check_range(const char* field, std::int64_t value, std::int64_t min, std::int64_t max) {
  if (value < min || value > max) {
    throw_error<UsageError>("prefix sharing demo: {} is {}, outside [{}, {}]", field, value, min,
                            max);
  }
}

const PrefixSharingParams& checked(const PrefixSharingParams& p) {
  check_range("prompt tokens", p.prompt_tokens, 1, 1 << 16);
  check_range("samples", p.n_samples, 1, 16);
  check_range("generated tokens", p.generated_tokens, 0, 1 << 16);
  check_range("block size", p.block_size, 1, 1024);
  return p;
}

}  // namespace

KvCacheConfig PrefixSharingScenario::cache_config(const PrefixSharingParams& p) {
  KvCacheConfig c;
  c.groups = uniform_layer_groups(4, KvDtype::F16);
  c.n_kv_heads = 8;
  c.head_dim = 64;
  c.block_size = p.block_size;
  c.max_context = p.prompt_tokens + p.generated_tokens;
  c.n_blocks = p.n_samples * ((c.max_context + p.block_size - 1) / p.block_size);
  c.host_storage = false;
  return c;
}

PrefixSharingScenario::PrefixSharingScenario(const PrefixSharingParams& params)
    : params_(checked(params)), shared_(cache_config(params)), separate_(cache_config(params)) {}

std::int64_t PrefixSharingScenario::tokens_per_sample() const {
  return steps_taken_ == 0 ? 0 : params_.prompt_tokens + steps_taken_ - 1;
}

void PrefixSharingScenario::step() {
  if (done()) return;
  if (steps_taken_ == 0) {
    prefill_and_fork();
  } else {
    decode_one_token();
  }
  ++steps_taken_;
}

void PrefixSharingScenario::prefill_and_fork() {
  shared_.add_sequence(0);
  shared_.grow(0, params_.prompt_tokens);
  for (SeqId s = 1; s < params_.n_samples; ++s) shared_.fork(0, s);
  for (SeqId s = 0; s < params_.n_samples; ++s) {
    separate_.add_sequence(s);
    separate_.grow(s, params_.prompt_tokens);
  }
}

void PrefixSharingScenario::decode_one_token() {
  for (SeqId s = 0; s < params_.n_samples; ++s) {
    std::vector<BlockCopy> copies;
    shared_.grow(s, 1, &copies);
    cow_copies_ += static_cast<std::int64_t>(copies.size());
    for (const BlockCopy& c : copies) copied_.insert(c.dst);
    separate_.grow(s, 1);
  }
}

}  // namespace kvscope
