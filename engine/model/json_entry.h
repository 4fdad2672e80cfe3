// One object of a JSON catalogue being read (the preset catalogues, the download catalog):
// typed fields with ranges, and errors that name the file, the entry and the field, e.g.
//   models.json: model 3: field "n_layers" is 0, outside the accepted range 1..16777216
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/json_reader.h"

namespace kvscope {

class JsonEntry {
 public:
  // ModelError unless `object` is a JSON object. `origin` (a file) and `entry` name it in
  // every error; `object` must outlive the reader.
  JsonEntry(std::string origin, std::string entry, const nlohmann::json& object);

  [[noreturn]] void fail(std::string_view field, std::string_view why) const;

  bool has(std::string_view field) const { return object_.contains(field); }
  const nlohmann::json& get(std::string_view field) const;  // present, or fail
  const std::string& entry() const { return entry_; }

  std::string text(std::string_view field) const;  // a non-empty string
  std::string text_or(std::string_view field, std::string fallback) const;
  std::int64_t integer(std::string_view field, std::int64_t min, std::int64_t max) const;
  double number(std::string_view field, double max) const;  // finite, in (0, max]
  bool boolean(std::string_view field, bool fallback) const;

 private:
  std::string origin_;
  std::string entry_;
  const nlohmann::json& object_;
};

}  // namespace kvscope
