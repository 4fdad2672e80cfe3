// A GGUF file (versions 2 and 3), memory-mapped and validated in full on open: header,
// every metadata key and value, every tensor info, alignment and the tensor data ranges.
// After construction every accessor is safe: offsets are in range, sizes do not overflow.
// Spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "quant/tensor_type.h"
#include "util/mapped_file.h"

namespace kvscope {

// GGUF metadata value types, numbered as in the file.
enum class GgufType : std::uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

std::string_view gguf_type_name(GgufType type);

// An array as the file stores it: `count` elements of `type` back to back in `bytes`
// (numbers little-endian, bools one byte, strings a uint64 length and the bytes, arrays
// their element type, count and elements). Reading a file copies none of it, so a 12 MiB
// uint8 array costs no memory beyond the mapping (one value object per element was ~48
// bytes each: a 289 MB file took 14.6 GB). No writer we know nests arrays; it is accepted.
struct GgufArray {
  GgufType type = GgufType::UINT8;
  std::uint64_t count = 0;
  std::string_view bytes;
};

// One metadata value. Integers are widened to 64 bits (unsigned file types as uint64,
// signed ones as int64), floats to double; `type` keeps the type stored in the file.
// Strings and arrays are views: into the mapping for values read from a file (valid while
// the GgufFile lives), into `storage` for values built in memory (gguf_writer.h).
struct GgufValue {
  GgufType type = GgufType::UINT8;
  std::variant<std::uint64_t, std::int64_t, double, bool, std::string_view, GgufArray> value = {};
  std::shared_ptr<const std::string> storage = {};  // owns what the views point at, if any

  bool is_integer() const;
  bool is_float() const;
  const GgufArray* array() const;  // nullptr unless an array
  GgufType array_type() const;     // the element type; UINT8 unless an array
  std::size_t array_size() const;  // 0 unless an array
  // Decodes the elements in order, each a value viewing this one's bytes (and sharing its
  // storage); memory stays O(1) whatever the count. Nothing is called unless an array.
  void for_each_element(const std::function<void(const GgufValue&)>& visit) const;
  // Element i (ModelError when out of range): direct for numbers and bools, a walk from the
  // first element for strings and arrays.
  GgufValue element(std::uint64_t i) const;
};

// One tensor: dims[0] is the row length (the fastest-moving index), as in ggml.
struct GgufTensor {
  std::string name;
  TensorType type = TensorType::F32;
  std::vector<std::int64_t> dims;
  std::uint64_t offset = 0;            // from the start of the data section, as stored in the file
  std::uint64_t n_bytes = 0;           // computed from type and dims
  const std::uint8_t* data = nullptr;  // points into the map

  std::int64_t n_elements() const;
  std::int64_t n_rows() const;  // product of dims[1..]
};

class GgufFile {
 public:
  // Maps and validates `path`; throws ModelError naming what is wrong (field, tensor, numbers).
  explicit GgufFile(const std::string& path);

  // Reads and validates only the header (metadata and tensor infos, every check the
  // constructor makes, tensor ranges against the file's size) with plain reads of the
  // file's first bytes, never mapping it: for listing models without touching their
  // weights. Tensors' `data` is nullptr. Throws as the constructor does.
  static GgufFile read_header(const std::string& path);

  const std::string& path() const { return path_; }
  std::uint32_t version() const { return version_; }
  std::uint64_t alignment() const { return alignment_; }
  std::uint64_t data_offset() const { return data_offset_; }
  std::uint64_t file_size() const { return file_size_; }

  // --- metadata, keys in file order
  const std::vector<std::string>& keys() const { return key_order_; }
  const GgufValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed access. get_* throw ModelError if the key is missing or of an incompatible type
  // ("metadata llama.block_count: expected an integer, found string"); find_* return nullopt
  // when missing but still throw on a wrong type. Integer getters accept any integer type
  // whose value fits; get_uint rejects negatives; float getters accept integers too.
  std::uint64_t get_uint(std::string_view key) const;
  std::optional<std::uint64_t> find_uint(std::string_view key) const;
  std::int64_t get_int(std::string_view key) const;
  std::optional<std::int64_t> find_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  std::optional<double> find_float(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::optional<bool> find_bool(std::string_view key) const;
  std::string get_string(std::string_view key) const;
  std::optional<std::string> find_string(std::string_view key) const;
  // Arrays are copied out element by element (the file keeps them packed).
  std::vector<std::string> get_string_array(std::string_view key) const;
  std::vector<float> get_float_array(std::string_view key) const;
  std::vector<std::int64_t> get_int_array(std::string_view key) const;

  // --- tensors, in file order
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* find_tensor(std::string_view name) const;
  // Throws ModelError "tensor NAME: not found in FILE" when absent.
  const GgufTensor& tensor(std::string_view name) const;

 private:
  GgufFile() = default;
  // Parses the header from `bytes`, the first bytes (or all) of the file; NeedMoreBytes
  // when they end inside the header.
  void parse(std::span<const std::uint8_t> bytes);

  std::optional<MappedFile> map_;     // empty for read_header()
  std::vector<std::uint8_t> header_;  // read_header()'s bytes, which the metadata views
  std::string path_;
  std::uint64_t file_size_ = 0;
  std::uint32_t version_ = 0;
  std::uint64_t alignment_ = 32;
  std::uint64_t data_offset_ = 0;
  std::vector<std::string> key_order_;
  std::map<std::string, GgufValue, std::less<>> metadata_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, std::size_t, std::less<>> tensor_index_;
};

}  // namespace kvscope
