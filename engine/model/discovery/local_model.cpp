#include "model/discovery/local_model.h"

#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_model.h"
#include "model/hf_config.h"
#include "model/safetensors_file.h"
#include "util/error.h"

namespace kvscope {

namespace {

namespace fs = std::filesystem;

// What a format's tensors add up to, and which types the layers' matrices use.
struct TensorTally {
  std::int64_t n_params = 0;
  std::int64_t bytes = 0;
  std::map<std::string, std::int64_t> layer_matrix_bytes;  // by type name ("Q4_1", "BF16")
  std::map<std::string, std::int64_t> other_matrix_bytes;  // token table, output, ...
  std::int64_t token_table_bytes = 0;
  std::int64_t token_row_bytes = 0;
  bool has_output = false;

  void add(std::string_view name, std::string type, std::size_t n_dims, std::int64_t elements,
           std::int64_t n_bytes) {
    n_params += elements;
    bytes += n_bytes;
    if (n_dims < 2) return;  // norms and biases say nothing about the quantization
    const bool in_layer = name.starts_with("blk.") || name.find("layers.") != std::string::npos;
    (in_layer ? layer_matrix_bytes : other_matrix_bytes)[std::move(type)] += n_bytes;
  }
};

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

// "Q4_1" when every layer matrix has that type (the token table often differs: llama.cpp
// names such a file after its layers too), else "mixed (Q4_K, Q6_K)", most bytes first.
std::string weight_type_of(const TensorTally& t) {
  const auto& by_type = t.layer_matrix_bytes.empty() ? t.other_matrix_bytes : t.layer_matrix_bytes;
  if (by_type.empty()) return "";
  if (by_type.size() == 1) return by_type.begin()->first;
  std::vector<std::pair<std::int64_t, std::string>> order;
  for (const auto& [type, bytes] : by_type) order.emplace_back(-bytes, type);
  std::sort(order.begin(), order.end());
  std::string names;
  for (const auto& [neg_bytes, type] : order) names += (names.empty() ? "" : ", ") + type;
  return "mixed (" + names + ")";
}

// As model_weights() does for a loaded model: a decoded token reads every weight except
// the untied token table, of which only its own row.
void set_weights(const TensorTally& t, LocalModel& m) {
  m.n_params = t.n_params;
  m.weight_bytes = t.bytes;
  m.weight_type = weight_type_of(t);
  m.weight_read_per_token =
      t.has_output ? t.bytes - t.token_table_bytes + t.token_row_bytes : t.bytes;
}

std::uint64_t size_of_part(const fs::path& part, std::size_t index, std::size_t count) {
  std::error_code ec;
  const auto size = fs::file_size(part, ec);
  if (ec) {
    throw_error<ModelError>("{}: part {} of {} cannot be read: {}", part.string(), index + 1, count,
                            ec.message());
  }
  return size;
}

void tally_gguf(const GgufFile& file, TensorTally& t) {
  for (const GgufTensor& tensor : file.tensors()) {
    t.add(tensor.name, upper(tensor_type_name(tensor.type)), tensor.dims.size(),
          tensor.n_elements(), static_cast<std::int64_t>(tensor.n_bytes));
    if (tensor.name == "token_embd.weight") {
      t.token_table_bytes = static_cast<std::int64_t>(tensor.n_bytes);
      t.token_row_bytes = static_cast<std::int64_t>(tensor.n_bytes) / tensor.n_rows();
    }
    t.has_output |= tensor.name == "output.weight";
  }
}

void read_gguf_parts(const std::vector<fs::path>& parts, LocalModel& m) {
  for (std::size_t i = 0; i < parts.size(); ++i)
    m.file_bytes += size_of_part(parts[i], i, parts.size());
  TensorTally tally;
  std::unique_ptr<GgufFile> first;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto file = std::make_unique<GgufFile>(GgufFile::read_header(parts[i].string()));
    tally_gguf(*file, tally);
    if (i == 0) first = std::move(file);
  }
  m.architecture = first->find_string("general.architecture").value_or("");
  set_weights(tally, m);
  m.spec = gguf_model_spec(*first);
  m.context_length = m.spec.context_length;
}

void tally_safetensors(const SafetensorsFile& file, TensorTally& t) {
  for (const SafetensorsTensor& tensor : file.tensors()) {
    t.add(tensor.name, std::string(safetensors_dtype_name(tensor.dtype)), tensor.shape.size(),
          tensor.n_elements(), static_cast<std::int64_t>(tensor.n_bytes()));
    if (tensor.name == "model.embed_tokens.weight" && !tensor.shape.empty() &&
        tensor.shape[0] > 0) {
      t.token_table_bytes = static_cast<std::int64_t>(tensor.n_bytes());
      t.token_row_bytes = static_cast<std::int64_t>(tensor.n_bytes()) / tensor.shape[0];
    }
    t.has_output |= tensor.name == "lm_head.weight";
  }
}

std::vector<fs::path> safetensors_in(const fs::path& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() == ".safetensors" && entry.is_regular_file()) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void read_hf_folder(const fs::path& folder, LocalModel& m) {
  m.spec = read_hf_config((folder / "config.json").string());
  m.architecture = m.spec.architecture;
  m.context_length = m.spec.context_length;
  const std::vector<fs::path> files = safetensors_in(folder);
  if (files.empty()) throw_error<ModelError>("{}: no .safetensors files", folder.string());
  TensorTally tally;
  for (std::size_t i = 0; i < files.size(); ++i) {
    m.file_bytes += size_of_part(files[i], i, files.size());
    tally_safetensors(SafetensorsFile::read_header(files[i].string()), tally);
  }
  set_weights(tally, m);
}

// Runs `read`; an error of any kind becomes the entry's error and clears what was read.
template <typename Read>
void read_or_record(LocalModel& m, Read read) {
  try {
    read(m);
    return;
  } catch (const std::exception& e) {
    m.error = e.what();
  }
  LocalModel cleared;
  cleared.name = std::move(m.name);
  cleared.path = std::move(m.path);
  cleared.format = m.format;
  cleared.n_parts = m.n_parts;
  cleared.error = std::move(m.error);
  m = std::move(cleared);
}

}  // namespace

LocalModel describe_gguf(const std::vector<fs::path>& parts) {
  LocalModel m;
  m.format = LocalModelFormat::Gguf;
  if (parts.empty()) {
    m.error = "no files";
    return m;
  }
  m.path = parts.front();
  m.name = parts.front().filename().string();
  m.n_parts = static_cast<std::int64_t>(parts.size());
  read_or_record(m, [&](LocalModel& out) { read_gguf_parts(parts, out); });
  return m;
}

LocalModel describe_hf_folder(const fs::path& folder) {
  LocalModel m;
  m.format = LocalModelFormat::HfFolder;
  m.path = folder;
  m.name = folder.filename().string();
  read_or_record(m, [&](LocalModel& out) { read_hf_folder(folder, out); });
  return m;
}

}  // namespace kvscope
