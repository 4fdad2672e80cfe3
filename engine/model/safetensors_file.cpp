#include "model/safetensors_file.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <set>

#include "model/header_file.h"
#include "model/json_reader.h"
#include "util/error.h"
#include "util/utf8.h"

namespace kvscope {

namespace {

using nlohmann::json;

constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
// Hugging Face names are under 100 bytes; the cap keeps every message that names one short.
constexpr std::size_t kMaxTensorNameBytes = 1024;
// Model weights have 1 to 4 dimensions; messages print the whole shape.
constexpr std::size_t kMaxDims = 16;

struct DtypeInfo {
  SafetensorsDtype dtype;
  std::string_view name;
  std::int64_t size;
};

constexpr std::array<DtypeInfo, 15> kDtypes{{
    {SafetensorsDtype::BOOL, "BOOL", 1},
    {SafetensorsDtype::U8, "U8", 1},
    {SafetensorsDtype::I8, "I8", 1},
    {SafetensorsDtype::F8_E4M3, "F8_E4M3", 1},
    {SafetensorsDtype::F8_E5M2, "F8_E5M2", 1},
    {SafetensorsDtype::I16, "I16", 2},
    {SafetensorsDtype::U16, "U16", 2},
    {SafetensorsDtype::F16, "F16", 2},
    {SafetensorsDtype::BF16, "BF16", 2},
    {SafetensorsDtype::I32, "I32", 4},
    {SafetensorsDtype::U32, "U32", 4},
    {SafetensorsDtype::F32, "F32", 4},
    {SafetensorsDtype::F64, "F64", 8},
    {SafetensorsDtype::I64, "I64", 8},
    {SafetensorsDtype::U64, "U64", 8},
}};

const DtypeInfo& dtype_info(SafetensorsDtype dtype) {
  for (const auto& d : kDtypes) {
    if (d.dtype == dtype) return d;
  }
  return kDtypes[0];  // unreachable: every enumerator is in the table
}

std::string shape_str(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// A non-negative JSON integer (floats like 3.0 are rejected: the format stores integers).
std::uint64_t get_index(const json& v, std::string_view what, std::string_view tensor,
                        const std::string& path) {
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0)) {
    throw_error<ModelError>("{}: tensor {}: {} must hold non-negative integers, got {}", path,
                            tensor, what, describe_json(v));
  }
  return v.get<std::uint64_t>();
}

}  // namespace

std::string_view safetensors_dtype_name(SafetensorsDtype dtype) {
  return dtype_info(dtype).name;
}

std::optional<SafetensorsDtype> safetensors_dtype_from_name(std::string_view name) {
  for (const auto& d : kDtypes) {
    if (d.name == name) return d.dtype;
  }
  return std::nullopt;
}

std::int64_t safetensors_dtype_size(SafetensorsDtype dtype) {
  return dtype_info(dtype).size;
}

std::int64_t SafetensorsTensor::n_elements() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;  // cannot overflow: checked against the byte size on open
  return n;
}

SafetensorsFile::SafetensorsFile(const std::string& path)
    : map_(std::in_place, path), path_(path), file_size_(map_->size()) {
  header_size_ = header_length(map_->data());
  read_header_text({reinterpret_cast<const char*>(map_->data() + 8), header_size_});
  for (auto& t : tensors_) t.data = map_->data() + data_offset() + t.begin;
}

SafetensorsFile SafetensorsFile::read_header(const std::string& path) {
  SafetensorsFile file;
  file.path_ = path;
  const HeaderFile opened = open_header_file(path);
  file.file_size_ = opened.size;
  std::array<std::uint8_t, 8> first8{};
  opened.file.read_at(0, first8.data(), std::min<std::uint64_t>(8, file.file_size_));
  file.header_size_ = file.header_length(first8.data());
  std::string header(file.header_size_, '\0');
  if (opened.file.read_at(8, header.data(), header.size()) != header.size()) {
    throw_error<ModelError>("{}: cannot read its {}-byte header", path, header.size());
  }
  file.read_header_text(header);
  return file;
}

std::uint64_t SafetensorsFile::header_length(const std::uint8_t* first8) const {
  if (file_size_ < 8) {
    throw_error<ModelError>("{}: file is {} bytes, too short for the 8-byte header length", path_,
                            file_size_);
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | first8[i];  // little-endian
  // The length itself is not printed: when the file is not a safetensors file at all, those
  // are its first 8 bytes, and an error message must not show a file's contents.
  if (n > kMaxHeaderBytes) {
    throw_error<ModelError>(
        "{}: not a safetensors file: the header length in its first 8 bytes is implausible "
        "(over the {} byte limit; the file is {} bytes)",
        path_, kMaxHeaderBytes, file_size_);
  }
  if (n > file_size_ - 8) {
    throw_error<ModelError>(
        "{}: the header length in its first 8 bytes is implausible: it runs past end of file "
        "(size {})",
        path_, file_size_);
  }
  return n;
}

void SafetensorsFile::read_header_text(std::string_view header) {
  if (auto bad = find_invalid_utf8(header)) {
    throw_error<ModelError>("{}: header is not valid UTF-8 (byte 0x{:02X} at header offset {})",
                            path_, static_cast<unsigned char>(header[*bad]), *bad);
  }
  parse_header(header);
  check_layout();
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

void SafetensorsFile::parse_header(std::string_view header) {
  const std::string& file = path();
  // nlohmann keeps the last of duplicate keys silently; the key hook sees every key of the
  // top-level object and lets us reject a tensor named twice.
  std::set<std::string> seen;
  std::string duplicate;
  auto on_key = [&](const std::string& key) {
    if (!seen.insert(key).second && duplicate.empty()) duplicate = key;
  };
  const json doc =
      parse_json(header, file + ": header", JsonLimits{.max_bytes = kMaxHeaderBytes}, on_key);
  if (!duplicate.empty()) {
    throw_error<ModelError>("{}: tensor {} appears twice", file, quote_prefix(duplicate));
  }
  if (!doc.is_object()) {
    throw_error<ModelError>("{}: header must be a JSON object, found {}", file, doc.type_name());
  }
  for (const auto& [name, entry] : doc.items()) {
    if (name.size() > kMaxTensorNameBytes) {
      throw_error<ModelError>("{}: tensor name of {} bytes is over the {} byte limit ('{}')", file,
                              name.size(), kMaxTensorNameBytes, quote_prefix(name));
    }
    if (name == "__metadata__") {
      if (!entry.is_object()) throw_error<ModelError>("{}: __metadata__ must be an object", file);
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          throw_error<ModelError>("{}: __metadata__ {}: must be a string, found {}", file,
                                  quote_prefix(key), describe_json(value));
        }
        metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
        !entry.contains("data_offsets")) {
      throw_error<ModelError>("{}: tensor {}: needs an object with dtype, shape, data_offsets",
                              file, name);
    }
    SafetensorsTensor t;
    t.name = name;
    const json& dtype = entry["dtype"];
    if (!dtype.is_string()) {
      throw_error<ModelError>("{}: tensor {}: dtype must be a string, found {}", file, name,
                              describe_json(dtype));
    }
    const auto& dtype_name = dtype.get_ref<const std::string&>();
    const auto parsed_dtype = safetensors_dtype_from_name(dtype_name);
    if (!parsed_dtype) {
      throw_error<ModelError>("{}: tensor {}: unknown dtype {}", file, name,
                              quote_prefix(dtype_name));
    }
    t.dtype = *parsed_dtype;
    const json& shape = entry["shape"];
    if (!shape.is_array()) {
      throw_error<ModelError>("{}: tensor {}: shape must be an array, found {}", file, name,
                              describe_json(shape));
    }
    if (shape.size() > kMaxDims) {
      throw_error<ModelError>("{}: tensor {}: shape has {} dimensions; at most {} are supported",
                              file, name, shape.size(), kMaxDims);
    }
    for (const auto& d : shape) {
      const auto v = get_index(d, "shape", name, file);
      if (v > static_cast<std::uint64_t>(INT64_MAX)) {
        throw_error<ModelError>("{}: tensor {}: dimension {} is too large", file, name, v);
      }
      t.shape.push_back(static_cast<std::int64_t>(v));
    }
    const json& offsets = entry["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2) {
      throw_error<ModelError>("{}: tensor {}: data_offsets must be [begin, end]", file, name);
    }
    t.begin = get_index(offsets[0], "data_offsets", name, file);
    t.end = get_index(offsets[1], "data_offsets", name, file);
    if (t.end < t.begin) {
      throw_error<ModelError>("{}: tensor {}: data_offsets [{}, {}] end before they begin", file,
                              name, t.begin, t.end);
    }
    index_[t.name] = tensors_.size();
    tensors_.push_back(std::move(t));
  }
}

void SafetensorsFile::check_layout() {
  const std::string& file = path();
  const std::uint64_t data_size = file_size_ - data_offset();
  // Byte size from shape x dtype, overflow-checked, must equal the offsets' span.
  for (auto& t : tensors_) {
    std::uint64_t bytes = static_cast<std::uint64_t>(safetensors_dtype_size(t.dtype));
    for (auto d : t.shape) {
      const auto ud = static_cast<std::uint64_t>(d);
      if (ud != 0 && bytes > UINT64_MAX / ud) {
        throw_error<ModelError>("{}: tensor {}: shape {} x {} overflows 64 bits", file, t.name,
                                shape_str(t.shape), safetensors_dtype_name(t.dtype));
      }
      bytes *= ud;
    }
    if (bytes != t.n_bytes()) {
      throw_error<ModelError>(
          "{}: tensor {}: data_offsets [{}, {}] hold {} bytes but shape {} x {} needs {}", file,
          t.name, t.begin, t.end, t.n_bytes(), shape_str(t.shape), safetensors_dtype_name(t.dtype),
          bytes);
    }
  }
  // Sorted by offset, the tensors must tile [0, data_size) exactly.
  std::vector<const SafetensorsTensor*> order;
  for (const auto& t : tensors_) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::uint64_t pos = 0;
  const SafetensorsTensor* prev = nullptr;
  for (const auto* t : order) {
    if (t->begin > pos) {
      throw_error<ModelError>(
          "{}: tensor {}: data_offsets [{}, {}] leave a gap of {} bytes after "
          "{}",
          file, t->name, t->begin, t->end, t->begin - pos,
          prev ? "tensor " + prev->name : std::string("the header"));
    }
    if (t->begin < pos) {
      throw_error<ModelError>("{}: tensor {}: data_offsets [{}, {}] overlap tensor {} [{}, {}]",
                              file, t->name, t->begin, t->end, prev->name, prev->begin, prev->end);
    }
    if (t->end > data_size) {
      throw_error<ModelError>(
          "{}: tensor {}: data_offsets [{}, {}] run past end of file (data section is {} bytes)",
          file, t->name, t->begin, t->end, data_size);
    }
    pos = t->end;
    prev = t;
  }
  if (pos != data_size) {
    throw_error<ModelError>(
        "{}: the tensors end at data offset {} but the data section is {} bytes ({} trailing "
        "bytes)",
        file, pos, data_size, data_size - pos);
  }
}

}  // namespace kvscope
