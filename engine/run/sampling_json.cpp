#include "run/sampling_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace kvscope {

namespace {

using nlohmann::json;

const json* field(const json& object, std::string_view name) {
  const auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

void read_float(const json& object, std::string_view name, float& out) {
  const json* v = field(object, name);
  if (!v) return;
  if (!v->is_number()) {
    throw_error<UsageError>("{}: expected a number, found {}", name, v->type_name());
  }
  const double d = v->get<double>();
  if (!(std::abs(d) <= std::numeric_limits<float>::max())) {
    throw_error<UsageError>("{}: {} is too large", name, v->dump());
  }
  out = static_cast<float>(d);
}

// A whole number that T holds; 40.0 counts as 40.
template <typename T>
void read_integer(const json& object, std::string_view name, T& out) {
  const json* v = field(object, name);
  if (!v) return;
  if (!v->is_number()) {
    throw_error<UsageError>("{}: expected a whole number, found {}", name, v->type_name());
  }
  bool fits = false;
  if (v->is_number_unsigned()) {
    fits = std::in_range<T>(v->get<std::uint64_t>());
  } else if (v->is_number_integer()) {
    fits = std::in_range<T>(v->get<std::int64_t>());
  } else {
    // lowest() and 2^digits are exact doubles for the integer types read here
    const double d = v->get<double>();
    fits = d == std::trunc(d) && d >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
           d < std::ldexp(1.0, std::numeric_limits<T>::digits);
  }
  if (!fits) {
    throw_error<UsageError>("{}: expected a whole number in [{}, {}], found {}", name,
                            std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(),
                            v->dump());
  }
  out = v->is_number_float() ? static_cast<T>(v->get<double>()) : v->get<T>();
}

// A number, or a decimal string of one (64 bits survive readers whose numbers are doubles).
void read_seed(const json& object, std::uint64_t& out) {
  const json* v = field(object, "seed");
  if (!v) return;
  if (!v->is_string()) {
    read_integer(object, "seed", out);
    return;
  }
  const std::string& s = v->get_ref<const std::string&>();
  std::uint64_t seed = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), seed);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    throw_error<UsageError>("seed: expected a whole number in [0, {}], found \"{}\"",
                            std::numeric_limits<std::uint64_t>::max(), s);
  }
  out = seed;
}

}  // namespace

nlohmann::json sampling_to_json(const SamplingParams& p) {
  return {{"temperature", p.temperature},
          {"top_k", p.top_k},
          {"top_p", p.top_p},
          {"min_p", p.min_p},
          {"repeat_penalty", p.repeat_penalty},
          {"repeat_last_n", p.repeat_last_n},
          {"frequency_penalty", p.frequency_penalty},
          {"presence_penalty", p.presence_penalty},
          {"seed", p.seed}};
}

SamplingParams sampling_from_json(const nlohmann::json& object) {
  if (!object.is_object()) {
    throw_error<UsageError>("sampling: expected a JSON object, found {}", object.type_name());
  }
  SamplingParams p;
  read_float(object, "temperature", p.temperature);
  read_integer(object, "top_k", p.top_k);
  read_float(object, "top_p", p.top_p);
  read_float(object, "min_p", p.min_p);
  read_float(object, "repeat_penalty", p.repeat_penalty);
  read_integer(object, "repeat_last_n", p.repeat_last_n);
  read_float(object, "frequency_penalty", p.frequency_penalty);
  read_float(object, "presence_penalty", p.presence_penalty);
  read_seed(object, p.seed);
  validate(p);
  return p;
}

}  // namespace kvscope
