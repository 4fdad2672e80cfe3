#include "model/generation_config.h"

#include <fmt/format.h>

#include "model/hf_json.h"
#include "model/json_reader.h"
#include "util/error.h"

namespace kvscope {

namespace {

using nlohmann::json;

// A few hundred bytes in every published folder.
constexpr JsonLimits kGenerationConfigLimits{.max_bytes = 1 << 20};

// eos_token_id: one id or a list; each must be a row of the embedding (config.json's
// vocab_size).
std::vector<std::int64_t> eos_ids_from(const json& config, const std::string& source,
                                       std::int64_t vocab_size) {
  std::vector<std::int64_t> ids;
  const auto it = config.find("eos_token_id");
  if (it == config.end() || it->is_null()) return ids;
  const json list = it->is_array() ? *it : json::array({*it});
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = it->is_array() ? fmt::format("eos_token_id[{}]", i) : "eos_token_id";
    if (!list[i].is_number_integer()) {
      throw_error<ModelError>("{}: {}: expected a token id, found {}", source, field,
                              describe_json(list[i]));
    }
    const auto id = list[i].get<std::int64_t>();
    if (id < 0 || id >= vocab_size) {
      throw_error<ModelError>("{}: {} = {} is out of range (vocab_size {} in config.json)", source,
                              field, id, vocab_size);
    }
    ids.push_back(id);
  }
  return ids;
}

// One sampling value checked against its range. Out of range: a ModelError, or, when the
// value is only used for sampling and do_sample is false (transformers then builds no
// sampler and never looks at it), a note and the value dropped.
template <typename T>
void check_range(std::optional<T>& value, bool in_range, const char* field, const char* rule,
                 bool used_when_greedy, SamplingDefaults& d) {
  if (!value || in_range) return;
  const bool sampling = d.do_sample.value_or(true);
  if (sampling || used_when_greedy) {
    throw_error<ModelError>("{}: {} = {}: {}", d.source, field, *value, rule);
  }
  d.notes.push_back(fmt::format("{}: {} = {} ignored: {}; do_sample is false, so it is not used",
                                d.source, field, *value, rule));
  value.reset();
}

SamplingDefaults sampling_from(const json& config, const std::string& source) {
  SamplingDefaults d;
  d.source = source;
  d.do_sample = hf::find_bool(config, "do_sample", source);
  d.temperature = hf::find_float(config, "temperature", source);
  d.top_k = hf::find_int(config, "top_k", source);
  d.top_p = hf::find_float(config, "top_p", source);
  d.min_p = hf::find_float(config, "min_p", source);
  d.repetition_penalty = hf::find_float(config, "repetition_penalty", source);
  // The same ranges transformers' logits processors enforce, except that temperature 0 is
  // taken as greedy (as vLLM does) where transformers asks for do_sample false instead.
  check_range(d.temperature, d.temperature >= 0.0, "temperature", "must be >= 0 (0 = greedy)",
              false, d);
  check_range(d.top_k, d.top_k >= 0, "top_k", "must be >= 0 (0 = off)", false, d);
  check_range(d.top_p, d.top_p >= 0.0 && d.top_p <= 1.0, "top_p", "must be in [0, 1]", false, d);
  check_range(d.min_p, d.min_p >= 0.0 && d.min_p <= 1.0, "min_p", "must be in [0, 1]", false, d);
  // transformers applies the repetition penalty in greedy decoding too.
  check_range(d.repetition_penalty, d.repetition_penalty > 0.0, "repetition_penalty",
              "must be > 0 (1 = off)", true, d);
  return d;
}

GenerationConfig generation_config_from(const json& config, const std::string& source,
                                        std::int64_t vocab_size) {
  if (!config.is_object()) {
    throw_error<ModelError>("{}: expected a JSON object, found {}", source, describe_json(config));
  }
  GenerationConfig g;
  g.eos_token_ids = eos_ids_from(config, source, vocab_size);
  g.sampling = sampling_from(config, source);
  return g;
}

}  // namespace

GenerationConfig parse_generation_config(std::string_view text, const std::string& source,
                                         std::int64_t vocab_size) {
  return generation_config_from(parse_json(text, source, kGenerationConfigLimits), source,
                                vocab_size);
}

GenerationConfig read_generation_config(const std::string& path, std::int64_t vocab_size) {
  return generation_config_from(read_json_file(path, kGenerationConfigLimits), path, vocab_size);
}

}  // namespace kvscope
