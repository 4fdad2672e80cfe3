// GgufFile reads back what GgufWriter writes: every metadata type, arrays (empty, nested,
// UTF-8 strings), tensors of several types at alignments 32 and 64, versions 2 and 3;
// the typed accessors convert what is safe and name the key when not; and the real
// stories260K model opens with the shape llama.cpp reports for it.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gguf_test_files.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

using test::Bytes;
using ::testing::HasSubstr;

GgufFile write_and_open(const GgufWriter& w) {
  return GgufFile(test::scratch_file(w.to_bytes()));
}

Bytes random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

TEST(GgufFileTest, RoundTripsEveryScalarType) {
  GgufWriter w;
  w.set_u8("t.u8", 255);
  w.set_i8("t.i8", -128);
  w.set_u16("t.u16", 65535);
  w.set_i16("t.i16", -32768);
  w.set_u32("t.u32", 4000000000u);
  w.set_i32("t.i32", -2000000000);
  w.set_u64("t.u64", std::numeric_limits<std::uint64_t>::max());
  w.set_i64("t.i64", std::numeric_limits<std::int64_t>::min());
  w.set_f32("t.f32", 1.5f);
  w.set_f64("t.f64", 3.141592653589793);
  w.set_bool("t.yes", true);
  w.set_bool("t.no", false);
  w.set_string("t.str", "hello");
  const GgufFile f = write_and_open(w);

  EXPECT_EQ(f.find("t.u8")->type, GgufType::UINT8);
  EXPECT_EQ(f.get_uint("t.u8"), 255u);
  EXPECT_EQ(f.find("t.i8")->type, GgufType::INT8);
  EXPECT_EQ(f.get_int("t.i8"), -128);
  EXPECT_EQ(f.get_uint("t.u16"), 65535u);
  EXPECT_EQ(f.get_int("t.i16"), -32768);
  EXPECT_EQ(f.find("t.u32")->type, GgufType::UINT32);
  EXPECT_EQ(f.get_uint("t.u32"), 4000000000u);
  EXPECT_EQ(f.get_int("t.i32"), -2000000000);
  EXPECT_EQ(f.get_uint("t.u64"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(f.get_int("t.i64"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(f.find("t.f32")->type, GgufType::FLOAT32);
  EXPECT_EQ(f.get_float("t.f32"), 1.5);
  EXPECT_EQ(f.find("t.f64")->type, GgufType::FLOAT64);
  EXPECT_EQ(f.get_float("t.f64"), 3.141592653589793);
  EXPECT_TRUE(f.get_bool("t.yes"));
  EXPECT_FALSE(f.get_bool("t.no"));
  EXPECT_EQ(f.get_string("t.str"), "hello");
  EXPECT_TRUE(f.find("t.u8")->is_integer());
  EXPECT_TRUE(f.find("t.f64")->is_float());
  EXPECT_FALSE(f.find("t.yes")->is_integer());
}

TEST(GgufFileTest, RoundTripsArraysIncludingEmptyNestedAndUtf8) {
  GgufWriter w;
  const std::vector<std::string> words = {"", "plain", "naïve", "日本語", "🦙 llama", "\n\t"};
  w.set_string_array("t.words", words);
  w.set_string_array("t.no_words", {});
  w.set_f32_array("t.floats", {0.25f, -1.0f, 3.0e38f});
  w.set_f32_array("t.no_floats", {});
  w.set_i32_array("t.ints", {-1, 0, 2147483647});
  w.set_value("t.bools", gguf_array_value(GgufType::BOOL, {GgufValue{GgufType::BOOL, true},
                                                           GgufValue{GgufType::BOOL, false},
                                                           GgufValue{GgufType::BOOL, true}}));
  const GgufValue inner =
      gguf_array_value(GgufType::UINT16, {GgufValue{GgufType::UINT16, std::uint64_t{7}}});
  w.set_value("t.nested",
              gguf_array_value(GgufType::ARRAY, {inner, gguf_array_value(GgufType::INT64, {})}));
  const GgufFile f = write_and_open(w);

  EXPECT_EQ(f.get_string_array("t.words"), words);
  EXPECT_TRUE(f.get_string_array("t.no_words").empty());
  EXPECT_EQ(f.find("t.no_words")->array_type(), GgufType::STRING);
  EXPECT_EQ(f.get_float_array("t.floats"), (std::vector<float>{0.25f, -1.0f, 3.0e38f}));
  EXPECT_TRUE(f.get_float_array("t.no_floats").empty());
  EXPECT_EQ(f.get_int_array("t.ints"), (std::vector<std::int64_t>{-1, 0, 2147483647}));
  EXPECT_EQ(f.find("t.ints")->array_type(), GgufType::INT32);
  const GgufValue* b = f.find("t.bools");
  ASSERT_EQ(b->array_size(), 3u);
  EXPECT_EQ(std::get<bool>(b->element(1).value), false);
  EXPECT_EQ(std::get<bool>(b->element(2).value), true);
  const GgufValue* n = f.find("t.nested");
  ASSERT_EQ(n->array_size(), 2u);
  const GgufValue first = n->element(0);
  EXPECT_EQ(first.array_type(), GgufType::UINT16);
  EXPECT_EQ(std::get<std::uint64_t>(first.element(0).value), 7u);
  EXPECT_EQ(n->element(1).array_type(), GgufType::INT64);
  EXPECT_EQ(n->element(1).array_size(), 0u);
  std::vector<GgufType> seen;
  n->for_each_element([&](const GgufValue& e) { seen.push_back(e.array_type()); });
  EXPECT_EQ(seen, (std::vector<GgufType>{GgufType::UINT16, GgufType::INT64}));
  EXPECT_THROW(n->element(2), ModelError);
}

TEST(GgufFileTest, RoundTripsLongStringsUtf8KeysAndKeepsKeyOrder) {
  GgufWriter w;
  std::string long_text(200000, 'x');
  for (std::size_t i = 0; i < long_text.size(); i += 97) long_text[i] = '\n';
  w.set_string("z.long", long_text);
  w.set_string("a.empty", "");
  w.set_string("m.名前", "ラマ 🦙");
  const GgufFile f = write_and_open(w);
  EXPECT_EQ(f.get_string("z.long"), long_text);
  EXPECT_EQ(f.get_string("a.empty"), "");
  EXPECT_EQ(f.get_string("m.名前"), "ラマ 🦙");
  EXPECT_EQ(f.keys(), (std::vector<std::string>{"z.long", "a.empty", "m.名前"}));
}

// Keys and tensor names must be UTF-8; values are kept as bytes, because vocabularies of
// byte-level tokenizers can hold tokens that are partial UTF-8 sequences.
TEST(GgufFileTest, KeepsStringValuesThatAreNotUtf8AsBytes) {
  GgufWriter w;
  const std::string partial = "\xe6\x97";  // the first two bytes of a three-byte character
  w.set_string_array("tokenizer.ggml.tokens", {"a", partial});
  const GgufFile f = write_and_open(w);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens")[1], partial);
}

TEST(GgufFileTest, IntegerGettersConvertWhatFitsAndFindReturnsNulloptWhenMissing) {
  GgufWriter w;
  w.set_i32("t.pos", 12);
  w.set_u64("t.small", 40);
  w.set_u32("t.int_as_float", 3);
  const GgufFile f = write_and_open(w);
  EXPECT_EQ(f.get_uint("t.pos"), 12u);
  EXPECT_EQ(f.get_int("t.small"), 40);
  EXPECT_EQ(f.get_float("t.int_as_float"), 3.0);
  EXPECT_EQ(f.find_uint("t.pos"), 12u);
  EXPECT_FALSE(f.find_uint("t.absent").has_value());
  EXPECT_FALSE(f.find_int("t.absent").has_value());
  EXPECT_FALSE(f.find_float("t.absent").has_value());
  EXPECT_FALSE(f.find_bool("t.absent").has_value());
  EXPECT_FALSE(f.find_string("t.absent").has_value());
  EXPECT_FALSE(f.has("t.absent"));
  EXPECT_EQ(f.find("t.absent"), nullptr);
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ModelError";
  return {};
}

TEST(GgufFileTest, TypedGettersRejectWrongTypesNamingKeyAndFoundType) {
  GgufWriter w;
  w.set_string("llama.block_count", "five");
  w.set_i32("t.negative", -3);
  w.set_u64("t.huge", std::numeric_limits<std::uint64_t>::max());
  w.set_u8("t.byte", 1);
  w.set_f32_array("t.floats", {1.0f});
  w.set_string_array("t.words", {"a"});
  const GgufFile f = write_and_open(w);
  const std::string msg = error_of([&] { f.get_uint("llama.block_count"); });
  EXPECT_THAT(msg, HasSubstr("metadata llama.block_count: expected"));
  EXPECT_THAT(msg, HasSubstr("found string"));
  EXPECT_THAT(msg, HasSubstr(f.path()));
  EXPECT_THAT(error_of([&] { f.get_uint("t.negative"); }), HasSubstr("found int32 -3"));
  EXPECT_THAT(error_of([&] { f.find_uint("t.negative"); }), HasSubstr("t.negative"));
  EXPECT_THAT(error_of([&] { f.get_int("t.huge"); }), HasSubstr("fits int64"));
  EXPECT_THAT(error_of([&] { f.get_bool("t.byte"); }), HasSubstr("expected a bool"));
  EXPECT_THAT(error_of([&] { f.get_string("t.byte"); }), HasSubstr("expected a string"));
  EXPECT_THAT(error_of([&] { f.get_float("t.words"); }), HasSubstr("found array of string"));
  EXPECT_THAT(error_of([&] { f.get_string_array("t.floats"); }),
              HasSubstr("found array of float32"));
  EXPECT_THAT(error_of([&] { f.get_int_array("t.floats"); }), HasSubstr("array of integers"));
  EXPECT_THAT(error_of([&] { f.get_float_array("t.words"); }), HasSubstr("array of numbers"));
  EXPECT_THAT(error_of([&] { f.get_uint("t.absent"); }),
              HasSubstr("metadata t.absent: missing from"));
}

struct LayoutCase {
  std::uint32_t version;
  std::uint64_t alignment;
};

class GgufFileTensorTest : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(GgufFileTensorTest, ReadsTensorsOfSeveralTypesWithTheirBytesInPlace) {
  const auto [version, alignment] = GetParam();
  struct Spec {
    std::string name;
    TensorType type;
    std::vector<std::int64_t> dims;
  };
  const std::vector<Spec> specs = {
      {"f32.weight", TensorType::F32, {8, 3}},     {"f16.weight", TensorType::F16, {16, 2, 3}},
      {"q8_0.weight", TensorType::Q8_0, {64, 2}},  {"q4_k.weight", TensorType::Q4_K, {256, 1}},
      {"bf16.norm", TensorType::BF16, {5}},        {"q4_0.weight", TensorType::Q4_0, {32, 1, 1, 3}},
      {"q6_k.weight", TensorType::Q6_K, {512, 3}},
  };
  GgufWriter w;
  w.set_version(version);
  w.set_alignment(alignment);
  w.set_string("general.architecture", "llama");
  std::vector<Bytes> data;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& s = specs[i];
    std::int64_t rows = 1;
    for (std::size_t d = 1; d < s.dims.size(); ++d) rows *= s.dims[d];
    data.push_back(random_bytes(static_cast<std::size_t>(row_bytes(s.type, s.dims[0]) * rows),
                                static_cast<unsigned>(i)));
    w.add_tensor(s.name, s.type, s.dims, data.back());
  }
  const GgufFile f = write_and_open(w);

  EXPECT_EQ(f.version(), version);
  EXPECT_EQ(f.alignment(), alignment);
  EXPECT_EQ(f.has("general.alignment"), alignment != 32);
  EXPECT_EQ(f.data_offset() % alignment, 0u);
  ASSERT_EQ(f.tensors().size(), specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(specs[i].name);
    const GgufTensor& t = f.tensor(specs[i].name);
    EXPECT_EQ(&t, &f.tensors()[i]);  // file order
    EXPECT_EQ(t.type, specs[i].type);
    EXPECT_EQ(t.dims, specs[i].dims);
    EXPECT_EQ(t.n_bytes, data[i].size());
    EXPECT_EQ(t.offset % alignment, 0u);
    ASSERT_NE(t.data, nullptr);
    EXPECT_EQ(std::memcmp(t.data, data[i].data(), data[i].size()), 0);
    std::int64_t n = 1;
    for (auto d : specs[i].dims) n *= d;
    EXPECT_EQ(t.n_elements(), n);
    EXPECT_EQ(t.n_rows(), n / specs[i].dims[0]);
  }
}

INSTANTIATE_TEST_SUITE_P(GgufVersionsAndAlignments, GgufFileTensorTest,
                         ::testing::Values(LayoutCase{3, 32}, LayoutCase{3, 64}, LayoutCase{2, 32},
                                           LayoutCase{2, 64}, LayoutCase{3, 1},
                                           LayoutCase{3, 4096}),
                         [](const auto& param_info) {
                           return "v" + std::to_string(param_info.param.version) + "_align" +
                                  std::to_string(param_info.param.alignment);
                         });

TEST(GgufFileTest, MissingTensorIsReportedByNameAndFile) {
  GgufWriter w;
  w.add_tensor_f32("present", TensorType::F32, {4}, {1, 2, 3, 4});
  const GgufFile f = write_and_open(w);
  EXPECT_EQ(f.find_tensor("absent"), nullptr);
  ASSERT_NE(f.find_tensor("present"), nullptr);
  const std::string msg = error_of([&] { f.tensor("absent"); });
  EXPECT_THAT(msg, HasSubstr("tensor absent: not found in " + f.path()));
}

TEST(GgufFileTest, OpensAFileWithNoMetadataAndNoTensors) {
  const GgufFile f = write_and_open(GgufWriter{});
  EXPECT_EQ(f.version(), 3u);
  EXPECT_TRUE(f.keys().empty());
  EXPECT_TRUE(f.tensors().empty());
  EXPECT_EQ(f.alignment(), 32u);
}

TEST(GgufFileTest, OpensRealStories260K) {
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const GgufFile f(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_uint("llama.block_count"), 5u);
  const GgufTensor& embd = f.tensor("token_embd.weight");
  EXPECT_EQ(embd.dims, (std::vector<std::int64_t>{64, 512}));
  EXPECT_EQ(embd.type, TensorType::F32);
  EXPECT_EQ(embd.n_bytes, 64u * 512u * 4u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 512u);
  const std::uint8_t* data_section = embd.data - embd.offset;
  for (const auto& t : f.tensors()) {
    EXPECT_EQ(t.data, data_section + t.offset) << t.name;
    EXPECT_LE(f.data_offset() + t.offset + t.n_bytes, f.file_size()) << t.name;
  }
  // The first layer's weights are finite numbers (the data pointer lands on real floats).
  const GgufTensor& wq = f.tensor("blk.0.attn_q.weight");
  ASSERT_EQ(wq.type, TensorType::F32);
  float first = 0;
  std::memcpy(&first, wq.data, sizeof first);
  EXPECT_TRUE(std::isfinite(first));
}

}  // namespace
}  // namespace kvscope
