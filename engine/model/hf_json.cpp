#include "model/hf_json.h"

#include <cmath>

#include "util/error.h"

namespace kvscope::hf {

using nlohmann::json;

namespace {

// The field's value, or nullptr when absent or null (configs write null for "unset").
const json* lookup(const json& obj, std::string_view field) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

[[noreturn]] void wrong_type(std::string_view field, std::string_view expected, const json& v,
                             const std::string& source) {
  throw_error<ModelError>("{}: {}: expected {}, found {}", source, field, expected, v.type_name());
}

}  // namespace

std::optional<std::int64_t> find_int(const json& obj, std::string_view field,
                                     const std::string& source) {
  const json* v = lookup(obj, field);
  if (!v) return std::nullopt;
  if (v->is_number_unsigned()) {
    const auto u = v->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) {
      throw_error<ModelError>("{}: {}: {} is too large", source, field, u);
    }
    return static_cast<std::int64_t>(u);
  }
  if (v->is_number_integer()) return v->get<std::int64_t>();
  // Some exporters write integral values as floats (4096.0); accept those exactly.
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 9.0e15) {
      return static_cast<std::int64_t>(d);
    }
  }
  wrong_type(field, "an integer", *v, source);
}

std::optional<double> find_float(const json& obj, std::string_view field,
                                 const std::string& source) {
  const json* v = lookup(obj, field);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(field, "a number", *v, source);
  return v->get<double>();
}

std::optional<bool> find_bool(const json& obj, std::string_view field, const std::string& source) {
  const json* v = lookup(obj, field);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong_type(field, "true or false", *v, source);
  return v->get<bool>();
}

std::optional<std::string> find_string(const json& obj, std::string_view field,
                                       const std::string& source) {
  const json* v = lookup(obj, field);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(field, "a string", *v, source);
  return v->get<std::string>();
}

std::int64_t get_int(const json& obj, std::string_view field, const std::string& source) {
  auto v = find_int(obj, field, source);
  if (!v) throw_error<ModelError>("{}: {}: missing", source, field);
  return *v;
}

}  // namespace kvscope::hf
