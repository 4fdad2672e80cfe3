// The ModelSpec tests build their tiny random llama models from (write_synthetic_gguf), so
// that every test starts from one valid spec and changes only what it is about.
#pragma once

#include <cstdint>
#include <string>

#include "model/model_spec.h"

namespace kvscope::test {

// The shape of the tiny random llama models tests write with write_synthetic_gguf: 2 layers,
// dim 32, 4 heads / 2 KV heads of 8, context 128; `vocab` embedding and output rows.
inline ModelSpec tiny_llama_spec(const std::string& name, std::int64_t vocab) {
  ModelSpec spec;
  spec.architecture = "llama";
  spec.name = name;
  spec.n_layers = 2;
  spec.dim = 32;
  spec.n_heads = 4;
  spec.n_kv_heads = 2;
  spec.head_dim = 8;
  spec.rope_dim = 8;
  spec.ffn_dim = 64;
  spec.vocab_size = vocab;
  spec.context_length = 128;
  return spec;
}

}  // namespace kvscope::test
