// A bounds-checked little-endian cursor over bytes that came from a file (a memory map).
// Every read checks the bytes remain first, so a hostile length or count can only ever
// produce a ModelError naming what was being read, the offset and the bytes left.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

#include "util/error.h"

namespace kvscope {

// Thrown by a ByteReader over the first bytes of a longer file when a read needs bytes the
// file has but the prefix does not: the caller reads a prefix of at least `bytes` and parses
// again. Deliberately no ModelError, so the reader's error wrapping lets it through.
struct NeedMoreBytes {
  std::uint64_t bytes = 0;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> bytes)
      : bytes_(bytes), file_size_(bytes.size()) {}
  // `bytes` holds the first bytes of a file of `file_size` bytes; sizes and bounds are the
  // file's, so a hostile length is judged against the whole file, never the prefix.
  ByteReader(std::span<const std::uint8_t> bytes, std::uint64_t file_size)
      : bytes_(bytes), file_size_(file_size) {}

  std::uint64_t pos() const { return pos_; }
  std::uint64_t size() const { return file_size_; }
  std::uint64_t remaining() const { return file_size_ - pos_; }

  // Reads a little-endian integer or IEEE float of type T; `what` names the field.
  template <typename T>
  T read(std::string_view what) {
    static_assert(std::is_arithmetic_v<T>);
    require(sizeof(T), what);
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      bits |= static_cast<std::uint64_t>(bytes_[pos_ + i]) << (8 * i);
    }
    pos_ += sizeof(T);
    if constexpr (std::is_floating_point_v<T>) {
      using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
      const auto narrow = static_cast<U>(bits);
      T value;
      std::memcpy(&value, &narrow, sizeof(T));
      return value;
    } else {
      return static_cast<T>(bits);
    }
  }

  // A view of the next n bytes (into the underlying buffer, no copy).
  std::string_view read_bytes(std::uint64_t n, std::string_view what) {
    require(n, what);
    const auto* p = reinterpret_cast<const char*>(bytes_.data() + pos_);
    pos_ += n;
    return {p, static_cast<std::size_t>(n)};
  }

  // The bytes from offset `begin` up to the current position (already read and checked).
  std::string_view bytes_since(std::uint64_t begin) const {
    return {reinterpret_cast<const char*>(bytes_.data() + begin),
            static_cast<std::size_t>(pos_ - begin)};
  }

  // Throws ModelError unless the file has n more bytes, NeedMoreBytes when only the prefix
  // lacks them.
  void require(std::uint64_t n, std::string_view what) const {
    if (n > remaining()) {
      throw_error<ModelError>("{}: needs {} bytes at offset {} but only {} remain (file size {})",
                              what, n, pos_, remaining(), size());
    }
    if (n > bytes_.size() - pos_) throw NeedMoreBytes{pos_ + n};
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::uint64_t file_size_ = 0;
  std::uint64_t pos_ = 0;
};

}  // namespace kvscope
