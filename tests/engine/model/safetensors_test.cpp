// SafetensorsFile: files written byte by byte here, one valid and one per way a header
// or data section can be wrong; each bad one must be a ModelError naming the fault.
#include "model/safetensors_file.h"

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// 8-byte little-endian `header_len`, then `header`, then `data`.
std::string write_raw(const std::string& name, std::uint64_t header_len, const std::string& header,
                      const std::string& data) {
  const auto path = (test::scratch_dir() / name).string();
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((header_len >> (8 * i)) & 0xff));
  out << header << data;
  return path;
}

std::string write_file(const std::string& header, const std::string& data) {
  return write_raw("t.safetensors", header.size(), header, data);
}

std::string bytes_of(const std::vector<float>& values) {
  std::string s(values.size() * sizeof(float), '\0');
  std::memcpy(s.data(), values.data(), s.size());
  return s;
}

// Opens `path` expecting a ModelError whose message holds every piece of `parts`.
void expect_error(const std::string& path, const std::vector<std::string>& parts) {
  try {
    SafetensorsFile file(path);
    ADD_FAILURE() << "expected a ModelError for " << path;
  } catch (const ModelError& e) {
    for (const auto& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

TEST(Safetensors, ValidFileExposesTensorsShapesDataAndMetadata) {
  const std::string header = R"({"__metadata__":{"format":"pt"},)"
                             R"("b":{"dtype":"F16","shape":[2],"data_offsets":[24,28]},)"
                             R"("a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})"
                             "    ";  // writers pad the header with spaces
  std::string data = bytes_of({1, 2, 3, 4, 5, 6});
  data += std::string("\x00\x3c\x00\xc0", 4);  // fp16 1.0, -2.0
  const SafetensorsFile file(write_file(header, data));

  ASSERT_EQ(file.tensors().size(), 2u);
  EXPECT_EQ(file.metadata().at("format"), "pt");
  const SafetensorsTensor* a = file.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, SafetensorsDtype::F32);
  EXPECT_EQ(a->shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a->n_elements(), 6);
  EXPECT_EQ(a->n_bytes(), 24u);
  float got[6];
  std::memcpy(got, a->data, sizeof(got));
  EXPECT_EQ(got[0], 1.0f);
  EXPECT_EQ(got[5], 6.0f);
  const SafetensorsTensor* b = file.find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, SafetensorsDtype::F16);
  EXPECT_EQ(b->data, a->data + 24);
  EXPECT_EQ(b->data[1], 0x3c);
  EXPECT_EQ(file.find("c"), nullptr);
}

TEST(Safetensors, EmptyHeaderWithNoDataIsValid) {
  const SafetensorsFile file(write_file("{}", ""));
  EXPECT_TRUE(file.tensors().empty());
}

TEST(Safetensors, ZeroSizedTensorsAreAllowed) {
  const SafetensorsFile file(
      write_file(R"({"e":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]},)"
                 R"("a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}})",
                 "xyz"));
  ASSERT_NE(file.find("e"), nullptr);
  EXPECT_EQ(file.find("e")->n_bytes(), 0u);
}

TEST(Safetensors, FileShorterThanTheLengthFieldIsRejected) {
  const auto path = (test::scratch_dir() / "short.safetensors").string();
  std::ofstream(path, std::ios::binary) << "abc";
  expect_error(path, {"3 bytes", "too short"});
}

// The message never prints the length: for a file that is not safetensors, it is the file's
// first 8 bytes (model_file_types_test.cpp has a secret read that way).
TEST(Safetensors, HeaderLengthOver100MBIsRejected) {
  const auto path = write_raw("big.safetensors", 100'000'001, "{}", "");
  expect_error(path, {"header length in its first 8 bytes is implausible", "100000000 byte limit",
                      "the file is 10 bytes"});
  try {
    SafetensorsFile::read_header(path);
    ADD_FAILURE() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), Not(HasSubstr("100000001")));
  }
}

TEST(Safetensors, HeaderLengthPastEndOfFileIsRejected) {
  expect_error(
      write_raw("past.safetensors", 1000, "{}", ""),
      {"header length in its first 8 bytes is implausible", "past end of file", "size 10"});
}

TEST(Safetensors, HeaderThatIsNotJsonIsRejected) {
  expect_error(write_file(R"({"a": {"dtype": )", ""), {"not valid JSON"});
}

TEST(Safetensors, HeaderThatIsNotUtf8IsRejected) {
  expect_error(write_file("{\"a\xff\":{}}", ""), {"not valid UTF-8", "0xFF", "offset 3"});
}

TEST(Safetensors, HeaderThatIsNotAnObjectIsRejected) {
  expect_error(write_file("[1,2]", ""), {"must be a JSON object", "array"});
}

TEST(Safetensors, TensorWithoutDataOffsetsIsRejected) {
  expect_error(write_file(R"({"a":{"dtype":"F32","shape":[1]}})", "xxxx"),
               {"tensor a", "data_offsets"});
}

TEST(Safetensors, UnknownDtypeIsRejectedNamingIt) {
  expect_error(write_file(R"({"w":{"dtype":"Q4","shape":[2],"data_offsets":[0,1]}})", "x"),
               {"tensor w", "unknown dtype Q4"});
}

TEST(Safetensors, NegativeDimensionIsRejected) {
  expect_error(write_file(R"({"w":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", "x"),
               {"tensor w", "shape", "non-negative integers", "-1"});
}

TEST(Safetensors, DuplicateTensorNameIsRejected) {
  expect_error(write_file(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                          R"("w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                          "xy"),
               {"tensor w appears twice"});
}

TEST(Safetensors, GapBetweenTensorsIsRejected) {
  expect_error(write_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})",
                          std::string(20, 'x')),
               {"tensor b", "[12, 20]", "gap of 4 bytes", "after tensor a"});
}

TEST(Safetensors, DataNotStartingAtZeroIsAGap) {
  expect_error(write_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                          std::string(12, 'x')),
               {"tensor a", "gap of 4 bytes", "after the header"});
}

TEST(Safetensors, OverlappingTensorsAreRejected) {
  expect_error(write_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                          std::string(12, 'x')),
               {"tensor b", "[4, 12]", "overlap tensor a [0, 8]"});
}

TEST(Safetensors, ByteSizeNotMatchingShapeAndDtypeIsRejected) {
  expect_error(
      write_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, 'x')),
      {"tensor a", "hold 8 bytes", "shape [3] x F32 needs 12"});
}

TEST(Safetensors, ShapeWhoseByteSizeOverflowsIsRejected) {
  expect_error(
      write_file(R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",
                 std::string(8, 'x')),
      {"tensor a", "overflows 64 bits"});
}

TEST(Safetensors, TrailingBytesAfterTheLastTensorAreRejected) {
  expect_error(
      write_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", std::string(11, 'x')),
      {"end at data offset 8", "data section is 11 bytes", "3 trailing bytes"});
}

TEST(Safetensors, TensorRunningPastEndOfFileIsRejected) {
  expect_error(
      write_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(8, 'x')),
      {"tensor a", "[0, 16]", "past end of file", "8 bytes"});
}

TEST(Safetensors, MetadataValuesMustBeStrings) {
  expect_error(write_file(R"({"__metadata__":{"n":3}})", ""), {"__metadata__ n", "string"});
}

// The message of the ModelError opening `path` raises ("" and a failure otherwise).
std::string error_of(const std::string& path) {
  try {
    SafetensorsFile file(path);
    ADD_FAILURE() << "expected a ModelError for " << path;
  } catch (const ModelError& e) {
    return e.what();
  }
  return {};
}

std::string brackets(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// Before the depth limit these parsed, and formatting the bad dtype (a recursive dump)
// overflowed the stack: SIGSEGV.
TEST(Safetensors, DtypeOrShapeNested100000DeepIsAnErrorNotACrash) {
  const std::string dtype =
      R"({"w":{"dtype":)" + brackets(100'000) + R"(,"shape":[1],"data_offsets":[0,1]}})";
  EXPECT_THAT(error_of(write_file(dtype, "x")), HasSubstr("header: JSON nested more than 64"));
  const std::string shape =
      R"({"w":{"dtype":"U8","shape":[)" + brackets(100'000) + R"(],"data_offsets":[0,1]}})";
  EXPECT_THAT(error_of(write_file(shape, "x")), HasSubstr("nested more than 64 levels"));
}

TEST(Safetensors, BadValuesAreDescribedNotDumped) {
  std::string wide = "[0";
  for (int i = 1; i < 100'000; ++i) wide += ",0";
  wide += "]";
  const std::string header = R"({"w":{"dtype":)" + wide + R"(,"shape":[1],"data_offsets":[0,1]}})";
  const std::string message = error_of(write_file(header, "x"));
  EXPECT_THAT(message, HasSubstr("tensor w: dtype must be a string, found array of 100000"));
  EXPECT_LT(message.size(), 300u);
  const std::string shape =
      R"({"w":{"dtype":"U8","shape":[)" + brackets(60) + R"(],"data_offsets":[0,1]}})";
  EXPECT_THAT(error_of(write_file(shape, "x")),
              HasSubstr("shape must hold non-negative integers, got array of 1 element"));
  const std::string long_dtype =
      R"({"w":{"dtype":")" + std::string(100'000, 'Q') + R"(","shape":[1],"data_offsets":[0,1]}})";
  EXPECT_LT(error_of(write_file(long_dtype, "x")).size(), 300u);
}

TEST(Safetensors, OverlongTensorNameIsRejectedQuotingAPrefix) {
  const std::string name(5000, 'n');
  const std::string message = error_of(
      write_file(R"({")" + name + R"(":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "x"));
  EXPECT_THAT(message, HasSubstr("tensor name of 5000 bytes is over the 1024 byte limit"));
  EXPECT_LT(message.size(), 300u);
}

TEST(Safetensors, ShapeWithTooManyDimensionsIsRejected) {
  expect_error(write_file(R"({"w":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],)"
                          R"("data_offsets":[0,1]}})",
                          "x"),
               {"tensor w", "shape has 17 dimensions; at most 16"});
}

}  // namespace
}  // namespace kvscope
