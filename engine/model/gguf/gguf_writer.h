// Writes GGUF files: the test fixtures (valid files, deliberately broken ones, tiny
// random-weight models of any shape) and synthetic models for benchmarks. Engine-side,
// never used by the UI. Produces exactly the layout GgufFile reads (v3 by default).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/gguf/gguf_file.h"
#include "quant/tensor_type.h"

namespace kvscope {

// Values built in memory for set_value; they own their bytes. Scalars need no helper:
// GgufValue{GgufType::UINT16, std::uint64_t{7}}. An array's elements must all be of
// `elem_type` (arrays of arrays included), else UsageError.
GgufValue gguf_string_value(std::string_view s);
GgufValue gguf_array_value(GgufType elem_type, const std::vector<GgufValue>& elems);

class GgufWriter {
 public:
  // --- metadata, written in the order added
  void set_u8(const std::string& key, std::uint8_t v);
  void set_i8(const std::string& key, std::int8_t v);
  void set_u16(const std::string& key, std::uint16_t v);
  void set_i16(const std::string& key, std::int16_t v);
  void set_u32(const std::string& key, std::uint32_t v);
  void set_i32(const std::string& key, std::int32_t v);
  void set_u64(const std::string& key, std::uint64_t v);
  void set_i64(const std::string& key, std::int64_t v);
  void set_f32(const std::string& key, float v);
  void set_f64(const std::string& key, double v);
  void set_bool(const std::string& key, bool v);
  void set_string(const std::string& key, const std::string& v);
  void set_string_array(const std::string& key, const std::vector<std::string>& v);
  void set_f32_array(const std::string& key, const std::vector<float>& v);
  void set_i32_array(const std::string& key, const std::vector<std::int32_t>& v);
  // Any value, including arrays of any element type (for tests of every type). The writer
  // keeps its own copy of the bytes, so `v` may view a GgufFile that closes before write().
  void set_value(const std::string& key, const GgufValue& v);

  // --- tensors: dims[0] is the row length. `data` must be row_bytes(type, dims[0]) * rows
  // bytes (already in the stored format; use quantize_row to make quantized data).
  void add_tensor(const std::string& name, TensorType type, std::vector<std::int64_t> dims,
                  std::vector<std::uint8_t> data);
  // Convenience: f32 values stored as `type` (quantized row by row when needed).
  void add_tensor_f32(const std::string& name, TensorType type, std::vector<std::int64_t> dims,
                      const std::vector<float>& values);

  // --- the layout knobs the bad-input tests turn
  void set_version(std::uint32_t v) { version_ = v; }
  void set_alignment(std::uint64_t a) {
    alignment_ = a;
  }  // also written as general.alignment
     // when != 32 and not already set

  // The file's bytes. Broken files are made by editing them at the positions layout() gives.
  std::vector<std::uint8_t> to_bytes() const;
  void write(const std::string& path) const;

  // Byte offsets inside to_bytes() of interesting fields, for tests that corrupt them.
  struct Layout {
    std::uint64_t tensor_count_pos = 0;            // uint64 n_tensors
    std::uint64_t kv_count_pos = 0;                // uint64 n_kv
    std::vector<std::uint64_t> kv_pos;             // start of each key (its uint64 length)
    std::vector<std::uint64_t> kv_type_pos;        // the uint32 value type of each key
    std::vector<std::uint64_t> tensor_info_pos;    // start of each tensor info (name length)
    std::vector<std::uint64_t> tensor_n_dims_pos;  // the uint32 n_dims field of each info
    std::vector<std::uint64_t> tensor_offset_pos;  // the uint64 offset field of each info
    std::vector<std::uint64_t> tensor_type_pos;    // the uint32 type field of each info
    std::uint64_t data_pos = 0;                    // start of the data section
    std::vector<std::uint64_t> tensor_data_pos;    // where each tensor's data starts
  };
  Layout layout() const;

 private:
  struct Tensor {
    std::string name;
    TensorType type;
    std::vector<std::int64_t> dims;
    std::vector<std::uint8_t> data;
  };
  // Builds the file; fills *layout when given (to_bytes and layout share this one path).
  std::vector<std::uint8_t> serialize(Layout* layout) const;

  std::vector<std::pair<std::string, GgufValue>> kvs_;
  std::vector<Tensor> tensors_;
  std::uint32_t version_ = 3;
  std::uint64_t alignment_ = 32;
};

}  // namespace kvscope
