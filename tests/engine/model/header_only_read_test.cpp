// GgufFile::read_header and SafetensorsFile::read_header: the header as the mapped open
// reads it, every check included, from plain reads of the file's first bytes; the file is
// never mapped (checked in /proc/self/maps) and its tensor data never read.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/safetensors_file.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

bool is_mapped(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  const std::string canonical = fs::canonical(path).string();
  for (std::string line; std::getline(maps, line);) {
    if (line.ends_with(" " + canonical)) return true;
  }
  return false;
}

void expect_same_header(const GgufFile& a, const GgufFile& b) {
  EXPECT_EQ(a.version(), b.version());
  EXPECT_EQ(a.file_size(), b.file_size());
  EXPECT_EQ(a.data_offset(), b.data_offset());
  EXPECT_EQ(a.keys(), b.keys());
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (std::size_t i = 0; i < a.tensors().size(); ++i) {
    EXPECT_EQ(a.tensors()[i].name, b.tensors()[i].name);
    EXPECT_EQ(a.tensors()[i].dims, b.tensors()[i].dims);
    EXPECT_EQ(a.tensors()[i].offset, b.tensors()[i].offset);
    EXPECT_EQ(a.tensors()[i].n_bytes, b.tensors()[i].n_bytes);
  }
}

TEST(HeaderOnlyRead, GgufHeaderEqualsTheMappedOpenAndMapsNothing) {
  KVSCOPE_REQUIRE_SHARED(stories, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(smol, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  // SmolLM2's header (49,152 tokens and their merges) is larger than the first 1 MiB read.
  for (const std::string& path : {stories, smol}) {
    SCOPED_TRACE(path);
    const GgufFile header = GgufFile::read_header(path);
    EXPECT_FALSE(is_mapped(path));
    for (const auto& t : header.tensors()) EXPECT_EQ(t.data, nullptr) << t.name;
    EXPECT_EQ(header.get_string("general.architecture"), "llama");
    EXPECT_EQ(header.get_string_array("tokenizer.ggml.tokens").size(),
              header.find("tokenizer.ggml.tokens")->array_size());
    const GgufFile mapped(path);
    EXPECT_TRUE(is_mapped(path));
    expect_same_header(header, mapped);
    EXPECT_EQ(header.get_string_array("tokenizer.ggml.tokens"),
              mapped.get_string_array("tokenizer.ggml.tokens"));
  }
  const GgufFile smol_header = GgufFile::read_header(smol);
  EXPECT_GT(smol_header.data_offset(), std::uint64_t{1} << 20) << "the header needs a second read";
}

TEST(HeaderOnlyRead, GgufHeaderRefusesWhatTheMappedOpenRefuses) {
  KVSCOPE_REQUIRE_SHARED(stories, "models/stories260K.gguf");
  const fs::path dir = test::scratch_dir();
  std::ifstream in(stories, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir / name, std::ios::binary) << content;
    return (dir / name).string();
  };
  // Truncated in the data (header intact), inside the header, and not a GGUF file at all.
  for (const std::string& path : {write("data-cut.gguf", bytes.substr(0, bytes.size() - 100)),
                                  write("header-cut.gguf", bytes.substr(0, 2000)),
                                  write("text.gguf", "hello"), write("empty.gguf", "")}) {
    SCOPED_TRACE(path);
    std::string mapped_error, header_error;
    try {
      GgufFile{path};
    } catch (const ModelError& e) {
      mapped_error = e.what();
    }
    try {
      GgufFile::read_header(path);
    } catch (const ModelError& e) {
      header_error = e.what();
    }
    EXPECT_FALSE(header_error.empty());
    EXPECT_FALSE(mapped_error.empty());
    if (!path.ends_with("empty.gguf")) {  // an empty file cannot be mapped at all
      EXPECT_EQ(header_error, mapped_error);
    }
  }
  EXPECT_THROW(GgufFile::read_header((dir / "missing.gguf").string()), ModelError);
}

TEST(HeaderOnlyRead, SafetensorsHeaderEqualsTheMappedOpenAndMapsNothing) {
  const fs::path path = test::scratch_dir() / "model.safetensors";
  nlohmann::json header = {{"a", {{"dtype", "F32"}, {"shape", {2, 3}}, {"data_offsets", {0, 24}}}},
                           {"b", {{"dtype", "BF16"}, {"shape", {4}}, {"data_offsets", {24, 32}}}}};
  std::string text = header.dump();
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((text.size() >> (8 * i)) & 0xff));
  std::ofstream(path, std::ios::binary) << bytes << text << std::string(32, 'w');

  const SafetensorsFile head = SafetensorsFile::read_header(path.string());
  EXPECT_FALSE(is_mapped(path.string()));
  const SafetensorsFile mapped(path.string());
  ASSERT_EQ(head.tensors().size(), mapped.tensors().size());
  for (std::size_t i = 0; i < head.tensors().size(); ++i) {
    EXPECT_EQ(head.tensors()[i].name, mapped.tensors()[i].name);
    EXPECT_EQ(head.tensors()[i].shape, mapped.tensors()[i].shape);
    EXPECT_EQ(head.tensors()[i].n_bytes(), mapped.tensors()[i].n_bytes());
    EXPECT_EQ(head.tensors()[i].data, nullptr);
  }
  EXPECT_EQ(head.header_size(), mapped.header_size());

  std::ofstream(path, std::ios::binary) << bytes << text << std::string(31, 'w');  // one short
  EXPECT_THAT([&] { SafetensorsFile::read_header(path.string()); },
              ::testing::ThrowsMessage<ModelError>(HasSubstr("past end of file")));
}

}  // namespace
}  // namespace kvscope
