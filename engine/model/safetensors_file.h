// A .safetensors file, memory-mapped and validated in full on open. Layout: an 8-byte
// little-endian header length N, N bytes of UTF-8 JSON mapping each tensor name to
// {dtype, shape, data_offsets [begin, end)} (plus an optional "__metadata__" object of
// strings), then the data section, which the tensors must tile exactly: sorted by offset
// they start at 0, leave no gap, do not overlap, and the last one ends at end of file.
// Spec: https://github.com/huggingface/safetensors#format
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/mapped_file.h"

namespace kvscope {

enum class SafetensorsDtype {
  BOOL,
  U8,
  I8,
  F8_E4M3,
  F8_E5M2,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  F64,
  I64,
  U64,
};

// "F32", "BF16", ... as the header spells them.
std::string_view safetensors_dtype_name(SafetensorsDtype dtype);
std::optional<SafetensorsDtype> safetensors_dtype_from_name(std::string_view name);
std::int64_t safetensors_dtype_size(SafetensorsDtype dtype);  // bytes per element

struct SafetensorsTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<std::int64_t> shape;  // outermost first (PyTorch order): [rows, cols]
  std::uint64_t begin = 0;          // data_offsets, relative to the data section
  std::uint64_t end = 0;
  const std::uint8_t* data = nullptr;  // points into the map

  std::uint64_t n_bytes() const { return end - begin; }
  std::int64_t n_elements() const;
};

class SafetensorsFile {
 public:
  // Maps and validates `path`; throws ModelError naming the file, the tensor and the numbers.
  explicit SafetensorsFile(const std::string& path);

  // Reads and validates only the 8-byte length and the JSON header (every check the
  // constructor makes, the layout against the file's size) with plain reads, never mapping
  // the file: for listing models without touching their weights. Tensors' `data` is nullptr.
  static SafetensorsFile read_header(const std::string& path);

  const std::string& path() const { return path_; }
  std::uint64_t header_size() const { return header_size_; }
  std::uint64_t data_offset() const { return 8 + header_size_; }

  // Tensors in header order.
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  const SafetensorsTensor* find(std::string_view name) const;
  // "__metadata__" (string to string), empty when absent.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  SafetensorsFile() = default;
  // Validates the header length read from the file's first 8 bytes; returns it.
  std::uint64_t header_length(const std::uint8_t* first8) const;
  // UTF-8, JSON and layout checks of the header text.
  void read_header_text(std::string_view header);
  void parse_header(std::string_view header);
  void check_layout();

  std::optional<MappedFile> map_;  // empty for read_header()
  std::string path_;
  std::uint64_t file_size_ = 0;
  std::uint64_t header_size_ = 0;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace kvscope
