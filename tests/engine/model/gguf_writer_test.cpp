// GgufWriter writes the byte layout the GGUF spec fixes, reports where each field is (the
// bad-input tests corrupt those bytes), pads at its alignment, and stores f32 values as
// f32/f16/bf16 exactly and quantized types row by row with quantize_row.
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gguf_test_files.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {
namespace {

using test::Bytes;
using test::peek;

GgufWriter two_tensor_writer() {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 2);
  w.add_tensor("a.weight", TensorType::F32, {4, 3}, Bytes(48, 0xaa));
  w.add_tensor("b.weight", TensorType::Q8_0, {32, 2}, Bytes(68, 0xbb));
  return w;
}

TEST(GgufWriterTest, StartsWithMagicVersionAndCounts) {
  GgufWriter w = two_tensor_writer();
  Bytes bytes = w.to_bytes();
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "GGUF");
  EXPECT_EQ(peek<std::uint32_t>(bytes, 4), 3u);
  EXPECT_EQ(peek<std::uint64_t>(bytes, 8), 2u);   // tensors
  EXPECT_EQ(peek<std::uint64_t>(bytes, 16), 2u);  // metadata
  w.set_version(2);
  EXPECT_EQ(peek<std::uint32_t>(w.to_bytes(), 4), 2u);
}

TEST(GgufWriterTest, LayoutPointsAtTheFieldsItNames) {
  const GgufWriter w = two_tensor_writer();
  const Bytes bytes = w.to_bytes();
  const auto lay = w.layout();
  EXPECT_EQ(peek<std::uint64_t>(bytes, lay.tensor_count_pos), 2u);
  EXPECT_EQ(peek<std::uint64_t>(bytes, lay.kv_count_pos), 2u);
  ASSERT_EQ(lay.kv_pos.size(), 2u);
  EXPECT_EQ(peek<std::uint64_t>(bytes, lay.kv_pos[1]), std::string("llama.block_count").size());
  EXPECT_EQ(std::string(bytes.begin() + static_cast<std::ptrdiff_t>(lay.kv_pos[1] + 8),
                        bytes.begin() + static_cast<std::ptrdiff_t>(lay.kv_type_pos[1])),
            "llama.block_count");
  EXPECT_EQ(peek<std::uint32_t>(bytes, lay.kv_type_pos[1]),
            static_cast<std::uint32_t>(GgufType::UINT32));
  EXPECT_EQ(peek<std::uint32_t>(bytes, lay.kv_type_pos[1] + 4), 2u);
  ASSERT_EQ(lay.tensor_info_pos.size(), 2u);
  EXPECT_EQ(peek<std::uint64_t>(bytes, lay.tensor_info_pos[1]), 8u);  // "b.weight"
  EXPECT_EQ(peek<std::uint32_t>(bytes, lay.tensor_n_dims_pos[1]), 2u);
  EXPECT_EQ(peek<std::int64_t>(bytes, lay.tensor_n_dims_pos[1] + 4), 32);
  EXPECT_EQ(peek<std::uint32_t>(bytes, lay.tensor_type_pos[1]),
            static_cast<std::uint32_t>(TensorType::Q8_0));
  EXPECT_EQ(peek<std::uint64_t>(bytes, lay.tensor_offset_pos[0]), 0u);
  EXPECT_EQ(peek<std::uint64_t>(bytes, lay.tensor_offset_pos[1]), 64u);  // 48 padded to 32
  EXPECT_EQ(lay.data_pos % 32, 0u);
  EXPECT_EQ(lay.tensor_data_pos[1], lay.data_pos + 64);
  EXPECT_EQ(bytes[lay.tensor_data_pos[1]], 0xbb);
  EXPECT_EQ(bytes[lay.tensor_data_pos[0] + 47], 0xaa);
  EXPECT_EQ(bytes[lay.tensor_data_pos[0] + 48], 0x00);  // padding
}

TEST(GgufWriterTest, PadsTheDataSectionAndEveryTensorToTheAlignment) {
  for (const std::uint64_t alignment : {1u, 8u, 32u, 64u, 256u}) {
    SCOPED_TRACE(alignment);
    GgufWriter w = two_tensor_writer();
    w.set_alignment(alignment);
    const Bytes bytes = w.to_bytes();
    const auto lay = w.layout();
    EXPECT_EQ(lay.data_pos % alignment, 0u);
    EXPECT_EQ(bytes.size() % alignment, 0u);
    for (const auto pos : lay.tensor_data_pos) EXPECT_EQ(pos % alignment, 0u);
    EXPECT_EQ(lay.tensor_data_pos[1] - lay.tensor_data_pos[0],
              (48 + alignment - 1) / alignment * alignment);
  }
}

TEST(GgufWriterTest, WritesGeneralAlignmentOnlyWhenNot32) {
  GgufWriter w = two_tensor_writer();
  EXPECT_FALSE(GgufFile(test::scratch_file(w.to_bytes())).has("general.alignment"));
  w.set_alignment(64);
  const GgufFile f(test::scratch_file(w.to_bytes()));
  EXPECT_EQ(f.find("general.alignment")->type, GgufType::UINT32);
  EXPECT_EQ(f.get_uint("general.alignment"), 64u);
  EXPECT_EQ(f.keys().size(), 3u);
  w.set_u32("general.alignment", 64);  // set by hand: written once
  EXPECT_EQ(GgufFile(test::scratch_file(w.to_bytes())).keys().size(), 3u);
}

TEST(GgufWriterTest, SettingAKeyAgainReplacesItInPlace) {
  GgufWriter w;
  w.set_u32("a", 1);
  w.set_string("b", "x");
  w.set_u32("a", 2);
  const GgufFile f(test::scratch_file(w.to_bytes()));
  EXPECT_EQ(f.keys(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(f.get_uint("a"), 2u);
}

TEST(GgufWriterTest, RejectsTensorsItCouldNotWriteValidly) {
  GgufWriter w;
  EXPECT_THROW(w.add_tensor("x", TensorType::F32, {4}, Bytes(15)), UsageError);
  EXPECT_THROW(w.add_tensor("x", TensorType::F32, {}, Bytes{}), UsageError);
  EXPECT_THROW(w.add_tensor("x", TensorType::F32, {1, 1, 1, 1, 1}, Bytes(4)), UsageError);
  EXPECT_THROW(w.add_tensor("x", TensorType::F32, {4, 0}, Bytes{}), UsageError);
  EXPECT_THROW(w.add_tensor("x", TensorType::Q8_0, {16}, Bytes(17)), UsageError);
  EXPECT_THROW(w.add_tensor("", TensorType::F32, {1}, Bytes(4)), UsageError);
  EXPECT_THROW(w.add_tensor_f32("x", TensorType::F32, {4}, {1, 2, 3}), UsageError);
  w.add_tensor("x", TensorType::F32, {1}, Bytes(4));
  EXPECT_THROW(w.add_tensor("x", TensorType::F32, {1}, Bytes(4)), UsageError);
  EXPECT_THROW(w.set_u8("", 1), UsageError);
  w.set_alignment(48);
  EXPECT_THROW(w.to_bytes(), UsageError);
  w.set_alignment(0);
  EXPECT_THROW(w.to_bytes(), UsageError);
}

TEST(GgufWriterTest, StoresF32F16AndBf16ValuesExactly) {
  const std::vector<float> values = {0.5f, -2.0f, 1024.0f, 0.0f, -0.25f, 3.0f};
  GgufWriter w;
  w.add_tensor_f32("f32", TensorType::F32, {3, 2}, values);
  w.add_tensor_f32("f16", TensorType::F16, {3, 2}, values);
  w.add_tensor_f32("bf16", TensorType::BF16, {6}, values);
  const GgufFile f(test::scratch_file(w.to_bytes()));
  const auto& t32 = f.tensor("f32");
  const auto& t16 = f.tensor("f16");
  const auto& tb16 = f.tensor("bf16");
  for (std::size_t i = 0; i < values.size(); ++i) {
    float x = 0;
    std::memcpy(&x, t32.data + 4 * i, 4);
    EXPECT_EQ(x, values[i]);
    std::uint16_t h = 0;
    std::memcpy(&h, t16.data + 2 * i, 2);
    EXPECT_EQ(fp16_to_float(h), values[i]);
    std::memcpy(&h, tb16.data + 2 * i, 2);
    EXPECT_EQ(bf16_to_float(h), values[i]);
  }
}

TEST(GgufWriterTest, QuantizesEachRowWithQuantizeRow) {
  for (const TensorType type : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_K}) {
    SCOPED_TRACE(tensor_type_name(type));
    const std::int64_t cols = tensor_type_info(type).block_elems * 2;
    const std::int64_t rows = 3;
    std::vector<float> values(static_cast<std::size_t>(cols * rows));
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = static_cast<float>(static_cast<int>(i * 37 % 101) - 50) / 17.0f;
    }
    GgufWriter w;
    w.add_tensor_f32("q", type, {cols, rows}, values);
    const GgufFile f(test::scratch_file(w.to_bytes()));
    const GgufTensor& t = f.tensor("q");
    const std::int64_t stride = row_bytes(type, cols);
    ASSERT_EQ(t.n_bytes, static_cast<std::uint64_t>(stride * rows));
    for (std::int64_t r = 0; r < rows; ++r) {
      Bytes expected(static_cast<std::size_t>(stride));
      quantize_row(type, values.data() + r * cols, expected.data(), cols);
      EXPECT_EQ(std::memcmp(t.data + r * stride, expected.data(), expected.size()), 0)
          << "row " << r;
    }
  }
}

TEST(GgufWriterTest, WriteCreatesAFileThatOpensAndReportsUnwritablePaths) {
  const GgufWriter w = two_tensor_writer();
  const std::string path = (test::scratch_dir() / "written.gguf").string();
  w.write(path);
  const GgufFile f(path);
  EXPECT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.file_size(), w.to_bytes().size());
  EXPECT_THROW(w.write((test::scratch_dir() / "no-such-dir" / "x.gguf").string()), UsageError);
}

}  // namespace
}  // namespace kvscope
