// Every "Model files" line of docs/bad-inputs.md that applies to GGUF, as a test: a valid
// file made by GgufWriter is corrupted at the field layout() locates, and opening it must
// throw a ModelError whose message names the file, the field or tensor, and the numbers.
// Then two sweeps: every truncation and single-byte corruptions of the header and
// metadata; each open either succeeds or throws ModelError, nothing else.
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gguf_test_files.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "util/error.h"

namespace kvscope {
namespace {

using test::Bytes;
using test::open_error;
using test::patch;
using ::testing::HasSubstr;

// kv: 0 general.architecture (string), 1 test.count (u32), 2 test.flag (bool),
//     3 test.names (string array), 4 test.aa (u8), 5 test.ab (u8)
// tensors: a.weight f32 [8, 2] at 0 (64 bytes), b.weight q8_0 [32, 2] at 64 (68 bytes),
//          c.weight f16 [4] at 160 (8 bytes)
GgufWriter base_writer() {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_u32("test.count", 7);
  w.set_bool("test.flag", true);
  w.set_string_array("test.names", {"alpha", "beta"});
  w.set_u8("test.aa", 1);
  w.set_u8("test.ab", 2);
  std::vector<float> a(16);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  w.add_tensor_f32("a.weight", TensorType::F32, {8, 2}, a);
  w.add_tensor("b.weight", TensorType::Q8_0, {32, 2}, Bytes(68, 0x11));
  w.add_tensor_f32("c.weight", TensorType::F16, {4}, {1, 2, 3, 4});
  return w;
}

class GgufBadInputTest : public ::testing::Test {
 protected:
  GgufWriter writer = base_writer();
  Bytes bytes = writer.to_bytes();
  GgufWriter::Layout lay = writer.layout();

  std::uint64_t dim_pos(std::size_t tensor, std::size_t d) const {
    return lay.tensor_n_dims_pos[tensor] + 4 + 8 * d;
  }
  std::uint64_t offset_of(std::size_t tensor) const {
    return test::peek<std::uint64_t>(bytes, lay.tensor_offset_pos[tensor]);
  }
};

TEST_F(GgufBadInputTest, TheUncorruptedFileOpens) {
  const GgufFile f(test::scratch_file(bytes));
  EXPECT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(offset_of(1), 64u);
  EXPECT_EQ(offset_of(2), 160u);
}

TEST_F(GgufBadInputTest, RejectsWrongMagicNamingTheFile) {
  std::memcpy(bytes.data(), "GGML", 4);
  const std::string msg = open_error(bytes);
  EXPECT_THAT(msg, HasSubstr("not a GGUF file: magic is 47 47 4d 4c ('GGML')"));
  EXPECT_THAT(msg, HasSubstr("model.gguf: "));
}

TEST_F(GgufBadInputTest, RejectsAMissingFileNamingThePath) {
  const std::string path = (test::scratch_dir() / "absent.gguf").string();
  try {
    GgufFile f(path);
    ADD_FAILURE() << "opened a missing file";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path + ": cannot open"));
  }
}

TEST_F(GgufBadInputTest, RejectsEmptyAndTooShortFiles) {
  EXPECT_THAT(open_error({}), HasSubstr("0 bytes, too short for the magic"));
  EXPECT_THAT(open_error({'G', 'G'}), HasSubstr("too short"));
  EXPECT_THAT(open_error({'G', 'G', 'U', 'F', 3, 0}), HasSubstr("version: needs 4 bytes"));
}

TEST_F(GgufBadInputTest, RejectsVersions0And1AndFutureVersions) {
  writer.set_version(0);
  EXPECT_THAT(open_error(writer.to_bytes()), HasSubstr("GGUF version 0 is invalid"));
  writer.set_version(1);
  EXPECT_THAT(open_error(writer.to_bytes()),
              HasSubstr("GGUF version 1 is not supported (it used 32-bit counts)"));
  writer.set_version(4);
  EXPECT_THAT(open_error(writer.to_bytes()), HasSubstr("GGUF version 4 is not supported"));
}

TEST_F(GgufBadInputTest, RejectsBigEndianFiles) {
  patch<std::uint32_t>(bytes, 4, 0x03000000u);  // version 3 written big-endian
  const std::string msg = open_error(bytes);
  EXPECT_THAT(msg, HasSubstr("big-endian GGUF is not supported"));
  EXPECT_THAT(msg, HasSubstr("0x03000000"));
  std::memcpy(bytes.data(), "FUGG", 4);
  EXPECT_THAT(open_error(bytes), HasSubstr("big-endian GGUF is not supported"));
}

TEST_F(GgufBadInputTest, RejectsHugeTensorCountBeforeAllocating) {
  patch<std::uint64_t>(bytes, lay.tensor_count_pos, std::uint64_t{1} << 60);
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor count 1152921504606846976 is impossible"));
}

TEST_F(GgufBadInputTest, RejectsMetadataCountNegativeAsSigned) {
  patch<std::uint64_t>(bytes, lay.kv_count_pos, ~std::uint64_t{0});
  const std::string msg = open_error(bytes);
  EXPECT_THAT(msg, HasSubstr("metadata count 18446744073709551615 (-1 as a signed count)"));
}

TEST_F(GgufBadInputTest, RejectsCountsThatFitAloneButNotTogether) {
  const std::uint64_t rest = bytes.size() - 24;
  patch<std::uint64_t>(bytes, lay.kv_count_pos, rest / 14);
  patch<std::uint64_t>(bytes, lay.tensor_count_pos, rest / 33);
  EXPECT_THAT(open_error(bytes), HasSubstr("cannot fit"));
}

TEST_F(GgufBadInputTest, RejectsTensorCountLargerThanTheInfosPresent) {
  patch<std::uint64_t>(bytes, lay.tensor_count_pos, 4);
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor"));
}

TEST_F(GgufBadInputTest, RejectsStringLengthPastEndOfFile) {
  patch<std::uint64_t>(bytes, lay.kv_type_pos[0] + 4, bytes.size());
  const std::string msg = open_error(bytes);
  EXPECT_THAT(msg, HasSubstr("metadata general.architecture: string length"));
  EXPECT_THAT(msg, HasSubstr("runs past end of file"));
}

TEST_F(GgufBadInputTest, RejectsAbsurdStringLengthWithoutBadAlloc) {
  patch<std::uint64_t>(bytes, lay.kv_type_pos[0] + 4, ~std::uint64_t{0} - 7);
  EXPECT_THAT(open_error(bytes), HasSubstr("string length 18446744073709551608 (-8 as a signed"));
}

TEST_F(GgufBadInputTest, RejectsArrayLengthPastEndOfFileOrOverTheLimit) {
  const std::uint64_t count_pos = lay.kv_type_pos[3] + 4 + 4;
  patch<std::uint64_t>(bytes, count_pos, 1000);
  EXPECT_THAT(open_error(bytes), HasSubstr("metadata test.names: array of 1000 string at offset"));
  patch<std::uint64_t>(bytes, count_pos, std::uint64_t{1} << 40);
  EXPECT_THAT(open_error(bytes), HasSubstr("exceeds the limit of 4194304 elements"));
  patch<std::uint64_t>(bytes, count_pos, ~std::uint64_t{0});
  EXPECT_THAT(open_error(bytes), HasSubstr("(-1 as a signed count)"));
}

TEST_F(GgufBadInputTest, RejectsUnknownValueAndElementTypes) {
  Bytes copy = bytes;
  patch<std::uint32_t>(copy, lay.kv_type_pos[1], 13);
  EXPECT_THAT(open_error(copy), HasSubstr("metadata test.count: unknown value type 13"));
  patch<std::uint32_t>(bytes, lay.kv_type_pos[3] + 4, 99);
  EXPECT_THAT(open_error(bytes), HasSubstr("metadata test.names: unknown array element type 99"));
}

TEST_F(GgufBadInputTest, RejectsArraysNestedTooDeep) {
  GgufValue v = gguf_array_value(GgufType::UINT8, {});
  for (int depth = 0; depth < 10; ++depth) v = gguf_array_value(GgufType::ARRAY, {v});
  GgufWriter w;
  w.set_value("test.deep", v);
  EXPECT_THAT(open_error(w.to_bytes()), HasSubstr("metadata test.deep: arrays nested more than"));
}

TEST_F(GgufBadInputTest, RejectsBoolNotZeroOrOne) {
  patch<std::uint8_t>(bytes, lay.kv_type_pos[2] + 4, 2);
  EXPECT_THAT(open_error(bytes), HasSubstr("metadata test.flag: bool value 2"));
}

TEST_F(GgufBadInputTest, RejectsEmptyKey) {
  patch<std::uint64_t>(bytes, lay.kv_pos[1], 0);
  EXPECT_THAT(open_error(bytes), HasSubstr("metadata key #1 at offset"));
  EXPECT_THAT(open_error(bytes), HasSubstr("is empty"));
}

TEST_F(GgufBadInputTest, RejectsOverlongKey) {
  patch<std::uint64_t>(bytes, lay.kv_pos[1], 70000);
  EXPECT_THAT(open_error(bytes), HasSubstr("length 70000 exceeds the 65535-byte limit"));
}

TEST_F(GgufBadInputTest, RejectsDuplicateKey) {
  bytes[lay.kv_type_pos[5] - 1] = 'a';  // test.ab -> test.aa
  EXPECT_THAT(open_error(bytes), HasSubstr("metadata key test.aa appears twice"));
}

TEST_F(GgufBadInputTest, RejectsKeyThatIsNotUtf8) {
  bytes[lay.kv_type_pos[5] - 1] = 0xff;
  EXPECT_THAT(open_error(bytes), HasSubstr("is not valid UTF-8: \"test.a\\xff\""));
  bytes[lay.kv_type_pos[5] - 1] = 0xc3;  // a lead byte with no continuation
  EXPECT_THAT(open_error(bytes), HasSubstr("not valid UTF-8"));
}

TEST_F(GgufBadInputTest, RejectsDuplicateTensorName) {
  bytes[lay.tensor_info_pos[1] + 8] = 'a';  // b.weight -> a.weight
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor a.weight appears twice (tensor #0 and #1)"));
}

TEST_F(GgufBadInputTest, RejectsEmptyTensorName) {
  patch<std::uint64_t>(bytes, lay.tensor_info_pos[2], 0);
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor #2 at offset"));
  EXPECT_THAT(open_error(bytes), HasSubstr("name is empty"));
}

TEST_F(GgufBadInputTest, RejectsOverlongTensorNameButAcceptsTheLimit) {
  GgufWriter ok;
  ok.add_tensor_f32(std::string(256, 'n'), TensorType::F32, {1}, {1});
  EXPECT_NO_THROW(GgufFile(test::scratch_file(ok.to_bytes())));
  GgufWriter w;
  w.add_tensor_f32(std::string(257, 'n'), TensorType::F32, {1}, {1});
  EXPECT_THAT(open_error(w.to_bytes()), HasSubstr("name length 257 exceeds the 256-byte limit"));
}

TEST_F(GgufBadInputTest, RejectsTensorNameThatIsNotUtf8) {
  bytes[lay.tensor_info_pos[1] + 8] = 0x80;
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor #1 at offset"));
  EXPECT_THAT(open_error(bytes), HasSubstr("name is not valid UTF-8: \"\\x80.weight\""));
}

TEST_F(GgufBadInputTest, RejectsTooManyOrZeroDims) {
  Bytes copy = bytes;
  patch<std::uint32_t>(copy, lay.tensor_n_dims_pos[1], 5);
  EXPECT_THAT(open_error(copy), HasSubstr("tensor b.weight: 5 dims; 1 to 4 are supported"));
  patch<std::uint32_t>(bytes, lay.tensor_n_dims_pos[1], 0);
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor b.weight: 0 dims"));
}

TEST_F(GgufBadInputTest, RejectsZeroOrNegativeDim) {
  patch<std::int64_t>(bytes, dim_pos(0, 1), 0);
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor a.weight: dim 1 is 0"));
  patch<std::int64_t>(bytes, dim_pos(0, 1), -3);
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor a.weight: dim 1 is -3"));
}

TEST_F(GgufBadInputTest, RejectsElementCountOverflowingInt64) {
  patch<std::int64_t>(bytes, dim_pos(0, 0), std::int64_t{1} << 40);
  patch<std::int64_t>(bytes, dim_pos(0, 1), std::int64_t{1} << 30);
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor a.weight: element count of dims [1099511627776, "
                                           "1073741824] overflows 64 bits"));
}

TEST_F(GgufBadInputTest, RejectsByteSizeOverflowingInt64) {
  // 2^62 f32 elements fit an int64 count, but not the 2^64 bytes they take.
  patch<std::int64_t>(bytes, dim_pos(0, 0), std::int64_t{1} << 31);
  patch<std::int64_t>(bytes, dim_pos(0, 1), std::int64_t{1} << 31);
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor a.weight: byte size of 4611686018427387904 "
                                           "f32 elements overflows 64 bits"));
}

TEST_F(GgufBadInputTest, RejectsUnknownTensorType) {
  patch<std::uint32_t>(bytes, lay.tensor_type_pos[2], 99);
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor c.weight: unknown tensor type 99"));
  patch<std::uint32_t>(bytes, lay.tensor_type_pos[2], 4);  // Q4_2, removed from ggml
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor c.weight: unknown tensor type 4"));
}

TEST_F(GgufBadInputTest, RejectsRowLengthNotAMultipleOfTheQuantBlock) {
  patch<std::int64_t>(bytes, dim_pos(1, 0), 40);
  EXPECT_THAT(
      open_error(bytes),
      HasSubstr("tensor b.weight: row length 40 is not a multiple of the q8_0 block size 32"));
}

TEST_F(GgufBadInputTest, RejectsMisalignedOffset) {
  patch<std::uint64_t>(bytes, lay.tensor_offset_pos[1], 68);
  EXPECT_THAT(open_error(bytes),
              HasSubstr("tensor b.weight: offset 68 is not a multiple of the alignment 32"));
}

TEST_F(GgufBadInputTest, RejectsOverlappingTensors) {
  patch<std::uint64_t>(bytes, lay.tensor_offset_pos[1], 32);
  EXPECT_THAT(open_error(bytes),
              HasSubstr("tensor b.weight: data [32, 100) overlaps tensor a.weight [0, 64)"));
}

TEST_F(GgufBadInputTest, RejectsAGapBetweenTensors) {
  bytes.resize(bytes.size() + 64, 0);  // room, so the gap is the only fault
  patch<std::uint64_t>(bytes, lay.tensor_offset_pos[2], 192);
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor c.weight: offset 192 leaves a gap of 32 bytes "
                                           "after tensor b.weight (expected offset 160)"));
}

TEST_F(GgufBadInputTest, RejectsAGapAtTheStartOfTheDataSection) {
  bytes.resize(bytes.size() + 64, 0);
  for (std::size_t i = 0; i < 3; ++i) {
    patch<std::uint64_t>(bytes, lay.tensor_offset_pos[i], offset_of(i) + 32);
  }
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor a.weight: offset 32 leaves a gap of 32 bytes "
                                           "after the start of the data section"));
}

TEST_F(GgufBadInputTest, RejectsTruncatedDataNamingTheTensorOffsetAndFileSize) {
  const std::uint64_t begin = lay.data_pos + 160;
  bytes.resize(begin + 4);
  EXPECT_THAT(open_error(bytes),
              HasSubstr(fmt::format("tensor c.weight: data [{}, {}) runs past end of file (size "
                                    "{}); offset 160 in the data section",
                                    begin, begin + 8, begin + 4)));
}

TEST_F(GgufBadInputTest, RejectsOffsetFarPastEndOfFile) {
  patch<std::uint64_t>(bytes, lay.tensor_offset_pos[2], std::uint64_t{1} << 62);
  EXPECT_THAT(open_error(bytes), HasSubstr("tensor c.weight: offset 4611686018427387904 (data "
                                           "section at"));
  EXPECT_THAT(open_error(bytes), HasSubstr("starts past end of file"));
}

TEST_F(GgufBadInputTest, RejectsAlignmentZeroNotAPowerOfTwoOrNotAnInteger) {
  writer.set_u32("general.alignment", 0);
  EXPECT_THAT(open_error(writer.to_bytes()), HasSubstr("general.alignment is 0"));
  writer.set_u32("general.alignment", 48);
  EXPECT_THAT(open_error(writer.to_bytes()),
              HasSubstr("general.alignment 48 is not a power of two"));
  writer.set_string("general.alignment", "32");
  EXPECT_THAT(open_error(writer.to_bytes()),
              HasSubstr("general.alignment: expected a positive integer, found string"));
}

// Opens `bytes` at `path`; true when it opened, false on ModelError, a test failure on
// anything else (a crash would end the test binary).
bool opens(const std::string& path, const Bytes& bytes) {
  test::write_bytes(path, bytes);
  try {
    const GgufFile f(path);
    for (const auto& t : f.tensors()) {  // everything it reports is inside the file
      EXPECT_LE(f.data_offset() + t.offset + t.n_bytes, f.file_size()) << t.name;
    }
    return true;
  } catch (const ModelError&) {
    return false;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a ModelError: " << e.what();
    return false;
  }
}

TEST_F(GgufBadInputTest, EveryTruncationFailsCleanlyUntilTheLastTensorIsComplete) {
  const std::string path = (test::scratch_dir() / "truncated.gguf").string();
  const std::uint64_t data_end = lay.data_pos + offset_of(2) + 8;
  for (std::uint64_t n = 0; n <= bytes.size(); ++n) {
    const Bytes cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(opens(path, cut), n >= data_end) << "truncated to " << n << " bytes";
  }
}

TEST_F(GgufBadInputTest, SingleByteCorruptionsOfTheHeaderNeverEscapeAsAnythingButModelError) {
  const std::string path = (test::scratch_dir() / "corrupt.gguf").string();
  int rejected = 0;
  for (std::uint64_t pos = 0; pos < lay.data_pos; ++pos) {
    for (const std::uint8_t value : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      if (bytes[pos] == value) continue;
      Bytes copy = bytes;
      copy[pos] = value;
      rejected += opens(path, copy) ? 0 : 1;
    }
  }
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace kvscope
