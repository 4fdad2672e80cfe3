// Serialises metadata and tensors into the GGUF layout GgufFile reads: header, key/value
// pairs in insertion order, tensor infos with offsets packed at the alignment, padding,
// then each tensor's bytes followed by padding to the alignment (as llama.cpp writes it).
#include "model/gguf/gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <numeric>

#include "util/error.h"
#include "util/half.h"

namespace kvscope {

namespace {

constexpr std::uint64_t kDefaultAlignment = 32;

// Appends little-endian fields to a byte vector.
class ByteSink {
 public:
  std::uint64_t pos() const { return bytes_.size(); }

  template <typename T>
  void put(T v) {
    std::uint64_t bits = 0;
    if constexpr (std::is_floating_point_v<T>) {
      using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
      U u;
      std::memcpy(&u, &v, sizeof(T));
      bits = u;
    } else {
      bits = static_cast<std::uint64_t>(v);
    }
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      bytes_.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
    }
  }

  void put_string(std::string_view s) {
    put<std::uint64_t>(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }

  void put_bytes(const std::vector<std::uint8_t>& b) {
    bytes_.insert(bytes_.end(), b.begin(), b.end());
  }

  void put_raw(std::string_view b) { bytes_.insert(bytes_.end(), b.begin(), b.end()); }

  void pad_to(std::uint64_t alignment) {
    bytes_.resize(bytes_.size() + (alignment - bytes_.size() % alignment) % alignment, 0);
  }

  std::vector<std::uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<std::uint8_t> bytes_;
};

std::uint64_t align_up(std::uint64_t n, std::uint64_t alignment) {
  return n + (alignment - n % alignment) % alignment;
}

// The integer in a value as raw two's-complement bits (signed values are kept as int64).
std::uint64_t integer_bits(const GgufValue& v) {
  if (const auto* u = std::get_if<std::uint64_t>(&v.value)) return *u;
  if (const auto* s = std::get_if<std::int64_t>(&v.value)) return static_cast<std::uint64_t>(*s);
  if (const auto* b = std::get_if<bool>(&v.value)) return *b ? 1 : 0;
  throw_error<UsageError>("GgufWriter: a {} value must hold an integer", gguf_type_name(v.type));
}

double float_value(const GgufValue& v) {
  if (const auto* d = std::get_if<double>(&v.value)) return *d;
  throw_error<UsageError>("GgufWriter: a {} value must hold a double", gguf_type_name(v.type));
}

template <typename T>
const T& held(const GgufValue& v) {
  const auto* p = std::get_if<T>(&v.value);
  if (p == nullptr) {
    throw_error<UsageError>("GgufWriter: a {} value holds the wrong alternative",
                            gguf_type_name(v.type));
  }
  return *p;
}

void put_value(ByteSink& out, const GgufValue& v) {
  switch (v.type) {
    case GgufType::UINT8:
    case GgufType::INT8:
      out.put(static_cast<std::uint8_t>(integer_bits(v)));
      break;
    case GgufType::UINT16:
    case GgufType::INT16:
      out.put(static_cast<std::uint16_t>(integer_bits(v)));
      break;
    case GgufType::UINT32:
    case GgufType::INT32:
      out.put(static_cast<std::uint32_t>(integer_bits(v)));
      break;
    case GgufType::UINT64:
    case GgufType::INT64:
      out.put(integer_bits(v));
      break;
    case GgufType::FLOAT32:
      out.put(static_cast<float>(float_value(v)));
      break;
    case GgufType::FLOAT64:
      out.put(float_value(v));
      break;
    case GgufType::BOOL:
      out.put(static_cast<std::uint8_t>(held<bool>(v) ? 1 : 0));
      break;
    case GgufType::STRING:
      out.put_string(held<std::string_view>(v));
      break;
    case GgufType::ARRAY: {  // the elements are already encoded
      const auto& array = held<GgufArray>(v);
      out.put(static_cast<std::uint32_t>(array.type));
      out.put<std::uint64_t>(array.count);
      out.put_raw(array.bytes);
      break;
    }
  }
}

GgufValue scalar(GgufType type, std::variant<std::uint64_t, std::int64_t, double, bool> value) {
  GgufValue v;
  v.type = type;
  std::visit([&](auto x) { v.value = x; }, value);
  return v;
}

// A value that views `bytes`, which it now owns.
GgufValue owning(GgufType type, std::string bytes, std::uint64_t count, GgufType elem_type) {
  GgufValue v;
  v.type = type;
  auto storage = std::make_shared<const std::string>(std::move(bytes));
  if (type == GgufType::ARRAY) {
    v.value = GgufArray{elem_type, count, *storage};
  } else {
    v.value = std::string_view(*storage);
  }
  v.storage = std::move(storage);
  return v;
}

template <typename T>
GgufValue array_of(GgufType elem_type, const std::vector<T>& elems) {
  std::vector<GgufValue> items;
  items.reserve(elems.size());
  for (const auto& e : elems) {
    if constexpr (std::is_same_v<T, float>) {
      items.push_back(GgufValue{elem_type, static_cast<double>(e)});
    } else if constexpr (std::is_same_v<T, std::int32_t>) {
      items.push_back(GgufValue{elem_type, static_cast<std::int64_t>(e)});
    } else {
      items.push_back(gguf_string_value(e));
    }
  }
  return gguf_array_value(elem_type, items);
}

// A copy that owns its bytes: a value read from a file views a mapping the writer must
// not depend on. Values built in memory already own theirs (and never change).
GgufValue owned_copy(const GgufValue& v) {
  if (v.storage) return v;
  if (const auto* s = std::get_if<std::string_view>(&v.value)) {
    return owning(v.type, std::string(*s), 0, GgufType::UINT8);
  }
  if (const auto* a = std::get_if<GgufArray>(&v.value)) {
    return owning(v.type, std::string(a->bytes), a->count, a->type);
  }
  return v;
}

}  // namespace

GgufValue gguf_string_value(std::string_view s) {
  return owning(GgufType::STRING, std::string(s), 0, GgufType::UINT8);
}

GgufValue gguf_array_value(GgufType elem_type, const std::vector<GgufValue>& elems) {
  ByteSink out;
  for (const auto& e : elems) {
    if (e.type != elem_type) {
      throw_error<UsageError>("GgufWriter: {} element in an array of {}", gguf_type_name(e.type),
                              gguf_type_name(elem_type));
    }
    put_value(out, e);
  }
  const std::vector<std::uint8_t> bytes = out.take();
  return owning(GgufType::ARRAY, std::string(bytes.begin(), bytes.end()), elems.size(), elem_type);
}

void GgufWriter::set_u8(const std::string& key, std::uint8_t v) {
  set_value(key, scalar(GgufType::UINT8, std::uint64_t{v}));
}
void GgufWriter::set_i8(const std::string& key, std::int8_t v) {
  set_value(key, scalar(GgufType::INT8, std::int64_t{v}));
}
void GgufWriter::set_u16(const std::string& key, std::uint16_t v) {
  set_value(key, scalar(GgufType::UINT16, std::uint64_t{v}));
}
void GgufWriter::set_i16(const std::string& key, std::int16_t v) {
  set_value(key, scalar(GgufType::INT16, std::int64_t{v}));
}
void GgufWriter::set_u32(const std::string& key, std::uint32_t v) {
  set_value(key, scalar(GgufType::UINT32, std::uint64_t{v}));
}
void GgufWriter::set_i32(const std::string& key, std::int32_t v) {
  set_value(key, scalar(GgufType::INT32, std::int64_t{v}));
}
void GgufWriter::set_u64(const std::string& key, std::uint64_t v) {
  set_value(key, scalar(GgufType::UINT64, v));
}
void GgufWriter::set_i64(const std::string& key, std::int64_t v) {
  set_value(key, scalar(GgufType::INT64, v));
}
void GgufWriter::set_f32(const std::string& key, float v) {
  set_value(key, scalar(GgufType::FLOAT32, double{v}));
}
void GgufWriter::set_f64(const std::string& key, double v) {
  set_value(key, scalar(GgufType::FLOAT64, v));
}
void GgufWriter::set_bool(const std::string& key, bool v) {
  set_value(key, scalar(GgufType::BOOL, v));
}
void GgufWriter::set_string(const std::string& key, const std::string& v) {
  set_value(key, gguf_string_value(v));
}
void GgufWriter::set_string_array(const std::string& key, const std::vector<std::string>& v) {
  set_value(key, array_of(GgufType::STRING, v));
}
void GgufWriter::set_f32_array(const std::string& key, const std::vector<float>& v) {
  set_value(key, array_of(GgufType::FLOAT32, v));
}
void GgufWriter::set_i32_array(const std::string& key, const std::vector<std::int32_t>& v) {
  set_value(key, array_of(GgufType::INT32, v));
}

// Setting a key again replaces its value in place (a file never holds a key twice).
void GgufWriter::set_value(const std::string& key, const GgufValue& v) {
  if (key.empty()) throw_error<UsageError>("GgufWriter: empty metadata key");
  const auto it =
      std::find_if(kvs_.begin(), kvs_.end(), [&](const auto& kv) { return kv.first == key; });
  if (it != kvs_.end()) {
    it->second = owned_copy(v);
  } else {
    kvs_.emplace_back(key, owned_copy(v));
  }
}

void GgufWriter::add_tensor(const std::string& name, TensorType type,
                            std::vector<std::int64_t> dims, std::vector<std::uint8_t> data) {
  if (name.empty()) throw_error<UsageError>("GgufWriter: empty tensor name");
  if (std::any_of(tensors_.begin(), tensors_.end(),
                  [&](const Tensor& t) { return t.name == name; })) {
    throw_error<UsageError>("GgufWriter: tensor {} added twice", name);
  }
  if (dims.empty() || dims.size() > 4) {
    throw_error<UsageError>("GgufWriter: tensor {} has {} dims (1 to 4)", name, dims.size());
  }
  if (std::any_of(dims.begin(), dims.end(), [](std::int64_t d) { return d <= 0; })) {
    throw_error<UsageError>("GgufWriter: tensor {} has a non-positive dim", name);
  }
  const auto& info = tensor_type_info(type);
  if (dims[0] % info.block_elems != 0) {
    throw_error<UsageError>("GgufWriter: tensor {}: row length {} is not a multiple of {}", name,
                            dims[0], info.block_elems);
  }
  const std::int64_t rows =
      std::accumulate(dims.begin() + 1, dims.end(), std::int64_t{1}, std::multiplies<>());
  const auto expected = static_cast<std::uint64_t>(row_bytes(type, dims[0]) * rows);
  if (data.size() != expected) {
    throw_error<UsageError>("GgufWriter: tensor {}: {} bytes of data, expected {}", name,
                            data.size(), expected);
  }
  tensors_.push_back(Tensor{name, type, std::move(dims), std::move(data)});
}

void GgufWriter::add_tensor_f32(const std::string& name, TensorType type,
                                std::vector<std::int64_t> dims, const std::vector<float>& values) {
  const std::int64_t n =
      std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
  if (dims.empty() || n <= 0 || static_cast<std::uint64_t>(n) != values.size()) {
    throw_error<UsageError>("GgufWriter: tensor {}: {} values for {} elements", name, values.size(),
                            n);
  }
  const std::int64_t cols = dims[0];
  const std::int64_t rows = n / cols;
  const std::int64_t stride = row_bytes(type, cols);
  std::vector<std::uint8_t> data(static_cast<std::size_t>(stride * rows));
  if (type == TensorType::F32) {
    std::memcpy(data.data(), values.data(), data.size());
  } else if (type == TensorType::F16 || type == TensorType::BF16) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::uint16_t h =
          type == TensorType::F16 ? float_to_fp16(values[i]) : float_to_bf16(values[i]);
      data[2 * i] = static_cast<std::uint8_t>(h);
      data[2 * i + 1] = static_cast<std::uint8_t>(h >> 8);
    }
  } else if (cols % tensor_type_info(type).block_elems == 0) {
    for (std::int64_t r = 0; r < rows; ++r) {
      quantize_row(type, values.data() + r * cols, data.data() + r * stride, cols);
    }
  }  // else add_tensor reports the row length
  add_tensor(name, type, std::move(dims), std::move(data));
}

std::vector<std::uint8_t> GgufWriter::serialize(Layout* layout) const {
  if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0) {
    throw_error<UsageError>("GgufWriter: alignment {} is not a power of two", alignment_);
  }
  const bool has_alignment_key = std::any_of(
      kvs_.begin(), kvs_.end(), [](const auto& kv) { return kv.first == "general.alignment"; });
  const bool add_alignment_key = alignment_ != kDefaultAlignment && !has_alignment_key;
  Layout lay;
  ByteSink out;
  out.put<std::uint8_t>('G'), out.put<std::uint8_t>('G');
  out.put<std::uint8_t>('U'), out.put<std::uint8_t>('F');
  out.put(version_);
  lay.tensor_count_pos = out.pos();
  out.put<std::uint64_t>(tensors_.size());
  lay.kv_count_pos = out.pos();
  out.put<std::uint64_t>(kvs_.size() + (add_alignment_key ? 1 : 0));
  auto put_kv = [&](const std::string& key, const GgufValue& v) {
    lay.kv_pos.push_back(out.pos());
    out.put_string(key);
    lay.kv_type_pos.push_back(out.pos());
    out.put(static_cast<std::uint32_t>(v.type));
    put_value(out, v);
  };
  for (const auto& [key, v] : kvs_) put_kv(key, v);
  if (add_alignment_key) {
    put_kv("general.alignment", scalar(GgufType::UINT32, std::uint64_t{alignment_}));
  }
  std::uint64_t offset = 0;  // of the next tensor in the data section
  for (const auto& t : tensors_) {
    lay.tensor_info_pos.push_back(out.pos());
    out.put_string(t.name);
    lay.tensor_n_dims_pos.push_back(out.pos());
    out.put(static_cast<std::uint32_t>(t.dims.size()));
    for (const std::int64_t d : t.dims) out.put(d);
    lay.tensor_type_pos.push_back(out.pos());
    out.put(static_cast<std::uint32_t>(t.type));
    lay.tensor_offset_pos.push_back(out.pos());
    out.put(offset);
    offset = align_up(offset + t.data.size(), alignment_);
  }
  out.pad_to(alignment_);
  lay.data_pos = out.pos();
  for (const auto& t : tensors_) {
    lay.tensor_data_pos.push_back(out.pos());
    out.put_bytes(t.data);
    out.pad_to(alignment_);
  }
  if (layout != nullptr) *layout = std::move(lay);
  return out.take();
}

std::vector<std::uint8_t> GgufWriter::to_bytes() const {
  return serialize(nullptr);
}

GgufWriter::Layout GgufWriter::layout() const {
  Layout lay;
  serialize(&lay);
  return lay;
}

void GgufWriter::write(const std::string& path) const {
  const auto bytes = to_bytes();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file)
    throw_error<UsageError>("GgufWriter: cannot create {} ({})", path, std::strerror(errno));
  file.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file)
    throw_error<UsageError>("GgufWriter: cannot write {} ({})", path, std::strerror(errno));
}

}  // namespace kvscope
