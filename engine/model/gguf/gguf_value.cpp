// GGUF metadata values: type names, and decoding a value from the file's bytes with every
// length and count checked against the bytes that remain. Strings and arrays are decoded
// as views of those bytes: reading metadata allocates nothing per element.
#include <limits>
#include <span>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_value_reader.h"
#include "util/error.h"

namespace kvscope {

std::string_view gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::UINT8:
      return "uint8";
    case GgufType::INT8:
      return "int8";
    case GgufType::UINT16:
      return "uint16";
    case GgufType::INT16:
      return "int16";
    case GgufType::UINT32:
      return "uint32";
    case GgufType::INT32:
      return "int32";
    case GgufType::FLOAT32:
      return "float32";
    case GgufType::BOOL:
      return "bool";
    case GgufType::STRING:
      return "string";
    case GgufType::ARRAY:
      return "array";
    case GgufType::UINT64:
      return "uint64";
    case GgufType::INT64:
      return "int64";
    case GgufType::FLOAT64:
      return "float64";
  }
  return "unknown";
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::UINT8:
    case GgufType::INT8:
    case GgufType::UINT16:
    case GgufType::INT16:
    case GgufType::UINT32:
    case GgufType::INT32:
    case GgufType::UINT64:
    case GgufType::INT64:
      return true;
    default:
      return false;
  }
}

bool GgufValue::is_float() const {
  return type == GgufType::FLOAT32 || type == GgufType::FLOAT64;
}

const GgufArray* GgufValue::array() const {
  return type == GgufType::ARRAY ? std::get_if<GgufArray>(&value) : nullptr;
}

GgufType GgufValue::array_type() const {
  const GgufArray* a = array();
  return a != nullptr ? a->type : GgufType::UINT8;
}

std::size_t GgufValue::array_size() const {
  const GgufArray* a = array();
  return a != nullptr ? static_cast<std::size_t>(a->count) : 0;
}

// " (-1 as a signed count)" for counts that only make sense as a negative int64.
std::string signed_hint(std::uint64_t count) {
  if (count <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return {};
  return fmt::format(" ({} as a signed count)", static_cast<std::int64_t>(count));
}

// A length-prefixed string; the length is checked against what remains before reading.
std::string_view read_gguf_string(ByteReader& r, std::string_view what) {
  const std::uint64_t at = r.pos();
  const auto len = r.read<std::uint64_t>(what);
  if (len > r.remaining()) {
    throw_error<ModelError>("{} {}{} at offset {} runs past end of file ({} bytes remain)", what,
                            len, signed_hint(len), at, r.remaining());
  }
  return r.read_bytes(len, what);
}

GgufType read_gguf_type(ByteReader& r, std::string_view what) {
  const auto raw = r.read<std::uint32_t>(what);
  if (raw > static_cast<std::uint32_t>(GgufType::FLOAT64)) {
    throw_error<ModelError>("unknown {} {} at offset {}", what, raw, r.pos() - 4);
  }
  return static_cast<GgufType>(raw);
}

namespace {

// Numbers and bools are only viewed, so their arrays may be long; strings and nested
// arrays are walked on open and each becomes an object when copied out (the largest real
// ones, vocabularies and merge lists, hold well under a million entries).
constexpr std::uint64_t kMaxArrayElements = std::uint64_t{1} << 24;
constexpr std::uint64_t kMaxWalkedArrayElements = std::uint64_t{1} << 22;
// Hostile nesting must not recurse the stack away.
constexpr int kMaxArrayDepth = 8;

// Bytes of one element of a fixed-size type; 0 for strings and arrays.
std::uint64_t fixed_size(GgufType type) {
  switch (type) {
    case GgufType::UINT8:
    case GgufType::INT8:
    case GgufType::BOOL:
      return 1;
    case GgufType::UINT16:
    case GgufType::INT16:
      return 2;
    case GgufType::UINT32:
    case GgufType::INT32:
    case GgufType::FLOAT32:
      return 4;
    case GgufType::UINT64:
    case GgufType::INT64:
    case GgufType::FLOAT64:
      return 8;
    case GgufType::STRING:
    case GgufType::ARRAY:
      return 0;
  }
  return 0;
}

// Bytes the smallest value of `type` takes (strings: the length; arrays: type and count).
std::uint64_t min_value_bytes(GgufType type) {
  if (type == GgufType::STRING) return 8;
  if (type == GgufType::ARRAY) return 12;
  return fixed_size(type);
}

ByteReader reader_of(std::string_view bytes) {
  return ByteReader(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

// Checks the count and every element, and returns a view of the elements' bytes.
GgufArray read_array(ByteReader& r, GgufType elem, int depth) {
  if (depth >= kMaxArrayDepth) {
    throw_error<ModelError>("arrays nested more than {} deep", kMaxArrayDepth);
  }
  const std::uint64_t at = r.pos();
  const auto count = r.read<std::uint64_t>("array length");
  const std::uint64_t size = fixed_size(elem);
  const std::uint64_t limit = size != 0 ? kMaxArrayElements : kMaxWalkedArrayElements;
  if (count > limit) {
    throw_error<ModelError>("array length {}{} at offset {} exceeds the limit of {} elements",
                            count, signed_hint(count), at, limit);
  }
  if (count > r.remaining() / min_value_bytes(elem)) {
    throw_error<ModelError>(
        "array of {} {} at offset {} runs past end of file (needs at least {} bytes, {} remain)",
        count, gguf_type_name(elem), at, count * min_value_bytes(elem), r.remaining());
  }
  const std::uint64_t begin = r.pos();
  if (size != 0) {
    const std::string_view bytes = r.read_bytes(count * size, "array elements");
    if (elem == GgufType::BOOL) {
      for (std::size_t i = 0; i < bytes.size(); ++i) {
        const auto b = static_cast<std::uint8_t>(bytes[i]);
        if (b > 1) {
          throw_error<ModelError>("bool value {} at offset {} is not 0 or 1", b, begin + i);
        }
      }
    }
    return GgufArray{elem, count, bytes};
  }
  for (std::uint64_t i = 0; i < count; ++i) read_gguf_value(r, elem, depth + 1);
  return GgufArray{elem, count, r.bytes_since(begin)};
}

}  // namespace

GgufValue read_gguf_value(ByteReader& r, GgufType type, int depth) {
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufType::UINT8:
      v.value = std::uint64_t{r.read<std::uint8_t>("uint8 value")};
      break;
    case GgufType::INT8:
      v.value = std::int64_t{r.read<std::int8_t>("int8 value")};
      break;
    case GgufType::UINT16:
      v.value = std::uint64_t{r.read<std::uint16_t>("uint16 value")};
      break;
    case GgufType::INT16:
      v.value = std::int64_t{r.read<std::int16_t>("int16 value")};
      break;
    case GgufType::UINT32:
      v.value = std::uint64_t{r.read<std::uint32_t>("uint32 value")};
      break;
    case GgufType::INT32:
      v.value = std::int64_t{r.read<std::int32_t>("int32 value")};
      break;
    case GgufType::UINT64:
      v.value = r.read<std::uint64_t>("uint64 value");
      break;
    case GgufType::INT64:
      v.value = r.read<std::int64_t>("int64 value");
      break;
    case GgufType::FLOAT32:
      v.value = double{r.read<float>("float32 value")};
      break;
    case GgufType::FLOAT64:
      v.value = r.read<double>("float64 value");
      break;
    case GgufType::BOOL: {
      const auto b = r.read<std::uint8_t>("bool value");
      if (b > 1) {
        throw_error<ModelError>("bool value {} at offset {} is not 0 or 1", b, r.pos() - 1);
      }
      v.value = b == 1;
      break;
    }
    case GgufType::STRING:
      v.value = read_gguf_string(r, "string length");
      break;
    case GgufType::ARRAY: {
      const GgufType elem = read_gguf_type(r, "array element type");
      v.value = read_array(r, elem, depth);
      break;
    }
  }
  return v;
}

void GgufValue::for_each_element(const std::function<void(const GgufValue&)>& visit) const {
  const GgufArray* a = array();
  if (a == nullptr) return;
  ByteReader r = reader_of(a->bytes);
  GgufValue e;  // one object reused for every element: storage is shared once
  e.storage = storage;
  for (std::uint64_t i = 0; i < a->count; ++i) {
    GgufValue decoded = read_gguf_value(r, a->type, 1);
    e.type = decoded.type;
    e.value = decoded.value;
    visit(e);
  }
}

GgufValue GgufValue::element(std::uint64_t i) const {
  const GgufArray* a = array();
  if (a == nullptr || i >= a->count) {
    throw_error<ModelError>("element {} of a {} with {} elements", i, gguf_type_name(type),
                            array_size());
  }
  ByteReader r = reader_of(a->bytes);
  if (const std::uint64_t size = fixed_size(a->type); size != 0) {
    r.read_bytes(i * size, "array elements");
  } else {
    for (std::uint64_t k = 0; k < i; ++k) read_gguf_value(r, a->type, 1);
  }
  GgufValue e = read_gguf_value(r, a->type, 1);
  e.storage = storage;
  return e;
}

}  // namespace kvscope
