// What GGUF metadata may cost: arrays stay packed in the mapping (a file of 12 MiB uint8
// arrays took ~48 bytes of memory per element, 14.6 GB for 289 MB), and the key count,
// tensor count and total metadata bytes are capped before they can cost more than a small
// multiple of the file. The hostile files are written here, sparse where they are large.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gguf_test_files.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;

template <typename T>
void put(std::ofstream& out, T v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof(T));  // the test hosts are little-endian
}

// A GGUF v3 with no tensors and `n_arrays` uint8 arrays of `n_elements` each, all holding
// `fill`; with fill 0 the elements are left as a hole (a sparse file: no disk, no writing).
std::string write_uint8_arrays(int n_arrays, std::uint64_t n_elements, char fill) {
  const auto path = (test::scratch_dir() / "arrays.gguf").string();
  std::ofstream out(path, std::ios::binary);
  out.write("GGUF", 4);
  put<std::uint32_t>(out, 3);
  put<std::uint64_t>(out, 0);  // tensors
  put<std::uint64_t>(out, static_cast<std::uint64_t>(n_arrays));
  const std::string chunk(1 << 20, fill);
  for (int i = 0; i < n_arrays; ++i) {
    const std::string key = "hostile.array." + std::to_string(i);
    put<std::uint64_t>(out, key.size());
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    put<std::uint32_t>(out, static_cast<std::uint32_t>(GgufType::ARRAY));
    put<std::uint32_t>(out, static_cast<std::uint32_t>(GgufType::UINT8));
    put<std::uint64_t>(out, n_elements);
    if (fill == 0) {
      out.seekp(static_cast<std::streamoff>(n_elements), std::ios::cur);
      continue;
    }
    for (std::uint64_t left = n_elements; left > 0;) {
      const auto n = std::min<std::uint64_t>(left, chunk.size());
      out.write(chunk.data(), static_cast<std::streamsize>(n));
      left -= n;
    }
  }
  const auto end = static_cast<std::uintmax_t>(out.tellp());
  out.close();
  std::filesystem::resize_file(path, end);  // a hole at the end still needs its length
  return path;
}

// Resident memory of this process now (not the peak, which an earlier test may have set).
std::uint64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

TEST(GgufMetadataLimits, ArraysStayPackedInTheMappingNotOneObjectPerElement) {
  // 4 x 4 MiB elements: ~800 MB as one value object per element; now a view of the map.
  const std::string path = write_uint8_arrays(4, 4 << 20, '\x07');
  const std::uint64_t before = resident_bytes();
  const GgufFile f(path);
  const std::uint64_t grown = resident_bytes() - before;
  EXPECT_LT(grown, std::uint64_t{32} << 20) << "opening grew resident memory by " << grown;
  ASSERT_NE(f.find("hostile.array.3"), nullptr);
  EXPECT_EQ(f.find("hostile.array.3")->array_size(), std::size_t{4} << 20);
  EXPECT_EQ(f.get_int_array("hostile.array.3").back(), 7);
}

TEST(GgufMetadataLimits, TotalMetadataOverTheLimitIsRefused) {
  // 17 arrays of 16 MiB (the most elements one array may hold): 272 MiB, sparse on disk.
  const std::string path = write_uint8_arrays(17, std::uint64_t{16} << 20, 0);
  try {
    GgufFile f(path);
    ADD_FAILURE() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("metadata hostile.array.15: the metadata reaches"));
    EXPECT_THAT(e.what(), HasSubstr("over the limit of 268435456 bytes"));
  }
}

TEST(GgufMetadataLimits, KeyAndTensorCountsOverTheLimitsAreRefused) {
  // Enough bytes after the header that the counts are not plainly impossible.
  GgufWriter w;
  w.set_string("pad", std::string(35 << 20, 'p'));
  const GgufWriter::Layout lay = w.layout();
  test::Bytes bytes = w.to_bytes();
  test::patch<std::uint64_t>(bytes, lay.kv_count_pos, 70'000);
  EXPECT_THAT(test::open_error(bytes),
              HasSubstr("metadata count 70000 is over the limit of 65536"));
  test::patch<std::uint64_t>(bytes, lay.kv_count_pos, 1);
  test::patch<std::uint64_t>(bytes, lay.tensor_count_pos, (1 << 20) + 1);
  EXPECT_THAT(test::open_error(bytes),
              HasSubstr("tensor count 1048577 is over the limit of 1048576"));
}

TEST(GgufMetadataLimits, StringArraysAreWalkedOnOpenAndCopiedOutOnRequest) {
  GgufWriter w;
  std::vector<std::string> tokens;
  for (int i = 0; i < 1000; ++i) tokens.push_back("tok" + std::to_string(i));
  w.set_string_array("tokenizer.ggml.tokens", tokens);
  w.set_f32_array("tokenizer.ggml.scores", std::vector<float>(1000, -1.5f));
  const GgufFile f(test::scratch_file(w.to_bytes()));
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens"), tokens);
  EXPECT_EQ(f.get_float_array("tokenizer.ggml.scores"), std::vector<float>(1000, -1.5f));
  const GgufValue* v = f.find("tokenizer.ggml.tokens");
  ASSERT_NE(v->array(), nullptr);
  EXPECT_EQ(v->array_type(), GgufType::STRING);
  EXPECT_EQ(std::get<std::string_view>(v->element(999).value), "tok999");
  EXPECT_EQ(v->array()->bytes.size(), 1000 * 8 + (10 * 4 + 90 * 5 + 900 * 6));
  // A string element whose length runs past its array's end is caught on open.
  test::Bytes bytes = w.to_bytes();
  const auto first_len = w.layout().kv_type_pos[0] + 4 + 4 + 8;
  test::patch<std::uint64_t>(bytes, first_len, 1 << 30);
  EXPECT_THAT(test::open_error(bytes), HasSubstr("metadata tokenizer.ggml.tokens: string length"));
}

}  // namespace
}  // namespace kvscope
