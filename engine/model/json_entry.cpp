#include "model/json_entry.h"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "util/error.h"

namespace kvscope {

using nlohmann::json;

JsonEntry::JsonEntry(std::string origin, std::string entry, const json& object)
    : origin_(std::move(origin)), entry_(std::move(entry)), object_(object) {
  if (!object_.is_object()) fail("", "must be a JSON object");
}

void JsonEntry::fail(std::string_view field, std::string_view why) const {
  if (field.empty()) throw_error<ModelError>("{}: {}: {}", origin_, entry_, why);
  throw_error<ModelError>("{}: {}: field \"{}\" {}", origin_, entry_, field, why);
}

const json& JsonEntry::get(std::string_view field) const {
  const auto it = object_.find(field);
  if (it == object_.end()) fail(field, "is missing");
  return *it;
}

std::string JsonEntry::text(std::string_view field) const {
  const json& v = get(field);
  if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
    fail(field, "must be a non-empty string");
  }
  return v.get<std::string>();
}

std::string JsonEntry::text_or(std::string_view field, std::string fallback) const {
  return has(field) ? text(field) : fallback;
}

std::int64_t JsonEntry::integer(std::string_view field, std::int64_t min, std::int64_t max) const {
  const json& v = get(field);
  if (!v.is_number_integer()) fail(field, "must be an integer");
  if (v.is_number_unsigned() &&
      v.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    fail(field, "is out of range");
  }
  const auto x = v.get<std::int64_t>();
  if (x < min || x > max) {
    fail(field, fmt::format("is {}, outside the accepted range {}..{}", x, min, max));
  }
  return x;
}

double JsonEntry::number(std::string_view field, double max) const {
  const json& v = get(field);
  if (!v.is_number()) fail(field, "must be a number");
  const auto x = v.get<double>();
  if (!std::isfinite(x) || x <= 0.0 || x > max) {
    fail(field, fmt::format("is {}, outside the accepted range (0, {}]", x, max));
  }
  return x;
}

bool JsonEntry::boolean(std::string_view field, bool fallback) const {
  const auto it = object_.find(field);
  if (it == object_.end()) return fallback;
  if (!it->is_boolean()) fail(field, "must be true or false");
  return it->get<bool>();
}

}  // namespace kvscope
