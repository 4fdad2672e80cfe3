// Typed fields of the JSON files of a Hugging Face folder (config.json, the shard index,
// tokenizer_config.json; read with model/json_reader.h) with errors that name the file and
// the field. Internal to the engine libraries that link nlohmann::json (model, and text
// for tokenizer.json); it exposes that type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvscope::hf {

// Typed field access on an object. Missing or null fields give nullopt; a value of the
// wrong type is a ModelError "SOURCE: FIELD: expected an integer, found string".
std::optional<std::int64_t> find_int(const nlohmann::json& obj, std::string_view field,
                                     const std::string& source);
std::optional<double> find_float(const nlohmann::json& obj, std::string_view field,
                                 const std::string& source);
std::optional<bool> find_bool(const nlohmann::json& obj, std::string_view field,
                              const std::string& source);
std::optional<std::string> find_string(const nlohmann::json& obj, std::string_view field,
                                       const std::string& source);
// Like find_int but a missing field is a ModelError "SOURCE: FIELD: missing".
std::int64_t get_int(const nlohmann::json& obj, std::string_view field, const std::string& source);

}  // namespace kvscope::hf
