// A Hugging Face folder's generation_config.json: the ids that end a generation and the
// sampling values its authors chose (model/sampling_defaults.h). Every other field (max_length,
// num_beams, cache settings, ...) is left alone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/sampling_defaults.h"

namespace kvscope {

struct GenerationConfig {
  // eos_token_id: one id or a list (Llama 3 Instruct lists three); every one ends a generation.
  std::vector<std::int64_t> eos_token_ids;
  SamplingDefaults sampling;
};

// Parses the file's text; `source` names it in messages, `vocab_size` is config.json's.
// ModelError "SOURCE: FIELD ..." for a field of the wrong JSON type, an eos id outside
// [0, vocab_size), and a sampling value outside its range (temperature < 0, top_k < 0, top_p
// or min_p outside [0, 1], repetition_penalty <= 0). As transformers, which only builds its
// samplers when do_sample is true, an out-of-range temperature, top_k, top_p or min_p beside
// "do_sample": false is not used and only noted (SamplingDefaults::notes).
GenerationConfig parse_generation_config(std::string_view text, const std::string& source,
                                         std::int64_t vocab_size);

// Reads and parses the file at `path` (at most 1 MiB: published ones are a few hundred bytes).
GenerationConfig read_generation_config(const std::string& path, std::int64_t vocab_size);

}  // namespace kvscope
