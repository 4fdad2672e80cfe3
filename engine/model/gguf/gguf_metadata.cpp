// The typed accessors of GgufFile: every conversion that can lose information (negative
// to unsigned, uint64 past int64, string to number) throws a ModelError naming the key,
// what was expected and what the file holds.
#include <limits>

#include "model/gguf/gguf_file.h"
#include "util/error.h"

namespace kvscope {

namespace {

// "string", "uint32 7", "array of string"
std::string describe(const GgufValue& v) {
  if (v.type == GgufType::ARRAY) {
    return fmt::format("array of {} ({} elements)", gguf_type_name(v.array_type()), v.array_size());
  }
  if (const auto* u = std::get_if<std::uint64_t>(&v.value); u && v.is_integer()) {
    return fmt::format("{} {}", gguf_type_name(v.type), *u);
  }
  if (const auto* s = std::get_if<std::int64_t>(&v.value); s && v.is_integer()) {
    return fmt::format("{} {}", gguf_type_name(v.type), *s);
  }
  return std::string(gguf_type_name(v.type));
}

[[noreturn]] void wrong_type(const std::string& path, std::string_view key,
                             std::string_view expected, const GgufValue& v) {
  throw_error<ModelError>("metadata {}: expected {}, found {} (in {})", key, expected, describe(v),
                          path);
}

// Integers are stored widened: unsigned file types as uint64, signed ones as int64.
std::uint64_t to_uint(const GgufValue& v, std::string_view key, const std::string& path) {
  if (v.is_integer()) {
    if (const auto* u = std::get_if<std::uint64_t>(&v.value)) return *u;
    if (const auto* s = std::get_if<std::int64_t>(&v.value); s && *s >= 0) {
      return static_cast<std::uint64_t>(*s);
    }
  }
  wrong_type(path, key, "a non-negative integer", v);
}

std::int64_t to_int(const GgufValue& v, std::string_view key, const std::string& path) {
  if (v.is_integer()) {
    if (const auto* s = std::get_if<std::int64_t>(&v.value)) return *s;
    const auto* u = std::get_if<std::uint64_t>(&v.value);
    if (u && *u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return static_cast<std::int64_t>(*u);
    }
  }
  wrong_type(path, key, "an integer that fits int64", v);
}

double to_float(const GgufValue& v, std::string_view key, const std::string& path) {
  if (v.is_float()) {
    if (const auto* d = std::get_if<double>(&v.value)) return *d;
  }
  if (v.is_integer()) {
    if (const auto* u = std::get_if<std::uint64_t>(&v.value)) return static_cast<double>(*u);
    if (const auto* s = std::get_if<std::int64_t>(&v.value)) return static_cast<double>(*s);
  }
  wrong_type(path, key, "a number", v);
}

bool to_bool(const GgufValue& v, std::string_view key, const std::string& path) {
  const auto* b = std::get_if<bool>(&v.value);
  if (v.type != GgufType::BOOL || b == nullptr) wrong_type(path, key, "a bool", v);
  return *b;
}

std::string_view to_string(const GgufValue& v, std::string_view key, const std::string& path) {
  const auto* s = std::get_if<std::string_view>(&v.value);
  if (v.type != GgufType::STRING || s == nullptr) wrong_type(path, key, "a string", v);
  return *s;
}

// The array, checked to hold elements `accepted` takes (an empty array of any type passes).
const GgufArray& to_array(const GgufValue& v, std::string_view key, const std::string& path,
                          std::string_view expected, bool (*accepted)(const GgufValue&)) {
  const GgufArray* a = v.array();
  if (a == nullptr) wrong_type(path, key, expected, v);
  if (a->count > 0 && !accepted(GgufValue{a->type})) wrong_type(path, key, expected, v);
  return *a;
}

bool is_string(const GgufValue& e) {
  return e.type == GgufType::STRING;
}
bool is_number(const GgufValue& e) {
  return e.is_integer() || e.is_float();
}
bool is_integer(const GgufValue& e) {
  return e.is_integer();
}

}  // namespace

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

namespace {

const GgufValue& must_find(const GgufFile& file, std::string_view key) {
  const GgufValue* v = file.find(key);
  if (v == nullptr) throw_error<ModelError>("metadata {}: missing from {}", key, file.path());
  return *v;
}

}  // namespace

std::uint64_t GgufFile::get_uint(std::string_view key) const {
  return to_uint(must_find(*this, key), key, path());
}

std::optional<std::uint64_t> GgufFile::find_uint(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? std::optional(to_uint(*v, key, path())) : std::nullopt;
}

std::int64_t GgufFile::get_int(std::string_view key) const {
  return to_int(must_find(*this, key), key, path());
}

std::optional<std::int64_t> GgufFile::find_int(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? std::optional(to_int(*v, key, path())) : std::nullopt;
}

double GgufFile::get_float(std::string_view key) const {
  return to_float(must_find(*this, key), key, path());
}

std::optional<double> GgufFile::find_float(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? std::optional(to_float(*v, key, path())) : std::nullopt;
}

bool GgufFile::get_bool(std::string_view key) const {
  return to_bool(must_find(*this, key), key, path());
}

std::optional<bool> GgufFile::find_bool(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? std::optional(to_bool(*v, key, path())) : std::nullopt;
}

std::string GgufFile::get_string(std::string_view key) const {
  return std::string(to_string(must_find(*this, key), key, path()));
}

std::optional<std::string> GgufFile::find_string(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? std::optional(std::string(to_string(*v, key, path()))) : std::nullopt;
}

std::vector<std::string> GgufFile::get_string_array(std::string_view key) const {
  const GgufValue& v = must_find(*this, key);
  const GgufArray& array = to_array(v, key, path(), "an array of string", is_string);
  std::vector<std::string> out;
  out.reserve(array.count);
  v.for_each_element([&](const GgufValue& e) { out.emplace_back(to_string(e, key, path())); });
  return out;
}

std::vector<float> GgufFile::get_float_array(std::string_view key) const {
  const GgufValue& v = must_find(*this, key);
  const GgufArray& array = to_array(v, key, path(), "an array of numbers", is_number);
  std::vector<float> out;
  out.reserve(array.count);
  v.for_each_element(
      [&](const GgufValue& e) { out.push_back(static_cast<float>(to_float(e, key, path()))); });
  return out;
}

std::vector<std::int64_t> GgufFile::get_int_array(std::string_view key) const {
  const GgufValue& v = must_find(*this, key);
  const GgufArray& array = to_array(v, key, path(), "an array of integers", is_integer);
  std::vector<std::int64_t> out;
  out.reserve(array.count);
  v.for_each_element([&](const GgufValue& e) { out.push_back(to_int(e, key, path())); });
  return out;
}

}  // namespace kvscope
