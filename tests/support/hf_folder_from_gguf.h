// A Hugging Face folder made from a llama-, qwen3-, gemma2- or gemma3-architecture GGUF by the
// project's own code, to check the HF loading path against the GGUF one on the same weights:
// every tensor dequantized with the engine's dequantize_row and stored as BF16 in `n_shards`
// safetensors shards split by layers (model-0000k-of-0000n.safetensors, with
// model.safetensors.index.json), under the names transformers' LlamaForCausalLM
// (Qwen3ForCausalLM with q_norm / k_norm; Gemma2ForCausalLM and Gemma3ForCausalLM with their four
// norms a layer, each stored as w where the GGUF holds 1 + w) uses, a llama's Q and K rows put
// back in HF order (llama.cpp's converter permutes them for adjacent-pair RoPE); config.json from
// the GGUF's
// spec; tokenizer.json from its vocab (gguf_tokenizer_json.h); tokenizer_config.json (BOS /
// EOS / padding text, add_bos_token, chat template) and generation_config.json from its
// tokenizer.ggml.* metadata. Tied embeddings stay tied: no lm_head.weight is written.
#pragma once

#include <filesystem>
#include <string>

namespace kvscope::test {

// Writes the folder into `folder` (created if missing). `conditional_generation` (gemma3 only)
// writes Gemma3ForConditionalGeneration's layout: config.json's text_config, the tensors under
// language_model.model. Throws ModelError for a GGUF the converter does not handle (another
// architecture, biases, RoPE scaling) and std::runtime_error when a file cannot be written.
void write_hf_folder_from_gguf(const std::string& gguf_path, const std::filesystem::path& folder,
                               int n_shards = 2, bool conditional_generation = false);

}  // namespace kvscope::test
