// Tiny random-weight models of any shape, written as GGUF files: fixtures for the decoder,
// backend and planner tests, and synthetic models for benchmarks. Deterministic: the same
// spec, type and seed give the same bytes on every platform.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.h"
#include "quant/tensor_type.h"

namespace kvscope {

// The tokenizer a synthetic file carries ("tokenizer.ggml.*" metadata). tokens.size()
// must not exceed spec.vocab_size; scores and token_types are empty or one per token.
struct SyntheticVocab {
  std::string model = "llama";  // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2"
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<std::int32_t> token_types;  // 1 normal, 2 unknown, 3 control, 6 byte, ...
  std::vector<std::string> merges;        // "gpt2" only
  std::int64_t bos_id = 1;
  std::int64_t eos_id = 2;
  std::optional<std::int64_t> unk_id = 0;
  std::optional<bool> add_bos_token;         // tokenizer.ggml.add_bos_token when set
  std::optional<std::string> chat_template;  // tokenizer.chat_template
};

// The default vocab for `vocab_size`: "<unk>", "<s>", "</s>", the 256 byte tokens
// "<0x00>".."<0xFF>" (when vocab_size >= 259), then distinct filler pieces ("a", "▁a",
// ...) with decreasing scores; types 2, 3, 3, 6 x 256, 1...; bos 1, eos 2, unk 0.
SyntheticVocab default_synthetic_vocab(std::int64_t vocab_size);

// Writes a GGUF model of `spec`'s shape to `path`. Architecture "qwen2" (with Q/K/V
// biases), "qwen3" (q/k norms), "gemma2" (post-norms, the window's period, both soft-caps) or
// "gemma3" (q/k norms, post-norms, the window's period, the sliding layers' rope base, a final
// soft-cap when set) when spec.architecture names it, else "llama";
// spec.qkv_bias adds the biases to a llama file too. What else a family computes (Gemma's
// embedding scale, GELU gate) is the loader's reading of the architecture. Matrices are stored as
// `weight_type` (quantized row by row), norms and biases as f32. Values are uniform in
// +-1/sqrt(cols) (norm weights near 1), from `seed`. Tied embeddings omit output.weight. Throws
// UsageError for a spec validate() rejects or a row length that is not a multiple of weight_type's
// block.
//
// SyntheticFill::Blocks writes F32/F16/Q8_0/Q4_0/Q4_K/Q6_K matrices straight as random stored
// blocks (synthetic_blocks.h): the same law of values, seconds instead of minutes for a model of
// billions of weights (benchmarks). Other types are quantized as with Quantize.
enum class SyntheticFill { Quantize, Blocks };
void write_synthetic_gguf(const std::string& path, const ModelSpec& spec, TensorType weight_type,
                          std::uint64_t seed, const SyntheticVocab* vocab = nullptr,
                          SyntheticFill fill = SyntheticFill::Quantize);

}  // namespace kvscope
