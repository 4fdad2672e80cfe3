// Helpers for the GGUF tests: write bytes to a scratch file, patch little-endian fields at
// the positions GgufWriter::layout() reports, and capture the ModelError an open raises.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/gguf/gguf_file.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope::test {

using Bytes = std::vector<std::uint8_t>;

// Replaces the file rather than truncating it: ext4 flushes a truncated-and-rewritten file
// on close (auto_da_alloc), which made the sweeps below far slower.
inline void write_bytes(const std::string& path, const Bytes& bytes) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

// Writes `bytes` to a fresh scratch file and returns its path.
inline std::string scratch_file(const Bytes& bytes, const std::string& name = "model.gguf") {
  const std::string path = (scratch_dir() / name).string();
  write_bytes(path, bytes);
  return path;
}

template <typename T>
void patch(Bytes& bytes, std::uint64_t pos, T value) {
  const auto bits = static_cast<std::uint64_t>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    bytes.at(pos + i) = static_cast<std::uint8_t>(bits >> (8 * i));
  }
}

template <typename T>
T peek(const Bytes& bytes, std::uint64_t pos) {
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    bits |= static_cast<std::uint64_t>(bytes.at(pos + i)) << (8 * i);
  }
  return static_cast<T>(bits);
}

// The message of the ModelError that opening `bytes` raises; a test failure (and "") when
// the file opens or anything other than a ModelError escapes.
inline std::string open_error(const Bytes& bytes) {
  const std::string path = scratch_file(bytes);
  try {
    GgufFile file(path);
    ADD_FAILURE() << "expected a ModelError, but the file opened (" << file.tensors().size()
                  << " tensors)";
  } catch (const ModelError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a ModelError, got another exception: " << e.what();
  }
  return {};
}

}  // namespace kvscope::test
