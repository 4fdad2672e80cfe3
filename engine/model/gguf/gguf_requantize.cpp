#include "model/gguf/gguf_requantize.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "util/error.h"

namespace kvscope {

namespace {

// llama.cpp's general.file_type for a model mostly of `type` (llama_ftype).
std::uint32_t llama_file_type(TensorType type) {
  switch (type) {
    case TensorType::F32:
      return 0;
    case TensorType::F16:
      return 1;
    case TensorType::Q4_0:
      return 2;
    case TensorType::Q4_1:
      return 3;
    case TensorType::Q8_0:
      return 7;
    case TensorType::Q5_0:
      return 8;
    case TensorType::Q5_1:
      return 9;
    case TensorType::Q4_K:
      return 14;  // Q4_K_S: Q4_K wherever the shape allows
    case TensorType::Q5_K:
      return 16;  // Q5_K_S
    case TensorType::Q6_K:
      return 18;
    case TensorType::BF16:
      return 32;
    default:
      return 0;
  }
}

std::vector<std::uint8_t> reencode(const GgufTensor& t, TensorType type) {
  const std::int64_t cols = t.dims[0], rows = t.n_rows();
  std::vector<float> row(static_cast<std::size_t>(cols));
  const std::int64_t in_bytes = row_bytes(t.type, cols), out_bytes = row_bytes(type, cols);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(rows * out_bytes));
  for (std::int64_t r = 0; r < rows; ++r) {
    dequantize_row(t.type, t.data + r * in_bytes, row.data(), cols);
    quantize_row(type, row.data(), out.data() + r * out_bytes, cols);
  }
  return out;
}

}  // namespace

TensorType requantize_type(TensorType target, std::int64_t row_length) {
  if (row_length % tensor_type_info(target).block_elems == 0) return target;
  switch (target) {
    case TensorType::Q4_K:
      return row_length % 32 == 0 ? TensorType::Q5_0 : TensorType::F16;
    case TensorType::Q5_K:
      return row_length % 32 == 0 ? TensorType::Q5_1 : TensorType::F16;
    case TensorType::Q6_K:
      return row_length % 32 == 0 ? TensorType::Q8_0 : TensorType::F16;
    default:
      return TensorType::F16;
  }
}

RequantizeReport requantize_gguf(const std::string& src, const std::string& dst,
                                 TensorType target) {
  const TensorTypeInfo& info = tensor_type_info(target);
  if (!info.supported) {
    throw_error<UsageError>(
        "cannot write {} tensors (types: f32, f16, bf16, q4_0, q4_1, q5_0, "
        "q5_1, q8_0, q4_K, q5_K, q6_K)",
        info.name);
  }
  const GgufFile in(src);
  GgufWriter out;
  out.set_alignment(in.alignment());
  for (const std::string& key : in.keys()) {
    if (key == "general.alignment") continue;  // the writer sets it
    if (key == "general.file_type") {
      out.set_u32(key, llama_file_type(target));
      continue;
    }
    out.set_value(key, *in.find(key));
  }
  RequantizeReport report;
  for (const GgufTensor& t : in.tensors()) {
    if (t.dims.size() < 2) {  // norms and biases stay as they are
      out.add_tensor(t.name, t.type, t.dims, {t.data, t.data + t.n_bytes});
      ++report.kept;
      continue;
    }
    const TensorType type = requantize_type(target, t.dims[0]);
    ++(type == target ? report.matrices : report.fallbacks);
    std::vector<std::uint8_t> data = reencode(t, type);
    report.bytes_out += data.size();
    out.add_tensor(t.name, type, t.dims, std::move(data));
  }
  const std::string part = dst + ".part" + std::to_string(::getpid());
  out.write(part);
  std::filesystem::rename(part, dst);
  return report;
}

}  // namespace kvscope
