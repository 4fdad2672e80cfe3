// Reading and validating a GGUF file. The layout (all little-endian):
//   "GGUF" | uint32 version | uint64 n_tensors | uint64 n_kv
//   n_kv x    { string key | uint32 type | value }          string = uint64 len + bytes
//   n_tensors x { string name | uint32 n_dims | int64 dims[n_dims] | uint32 type | uint64 offset }
//   padding to general.alignment | data section (tensor offsets are relative to its start)
// Every count and length is checked against the bytes that remain before anything is
// allocated for it, so a hostile file ends in a ModelError, never a bad_alloc or a crash.
#include "model/gguf/gguf_file.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <numeric>
#include <stdexcept>

#include <fmt/ranges.h>

#include "model/gguf/byte_reader.h"
#include "model/gguf/gguf_value_reader.h"
#include "model/header_file.h"
#include "util/error.h"
#include "util/utf8.h"

namespace kvscope {

namespace {

constexpr std::uint64_t kDefaultAlignment = 32;
constexpr std::uint64_t kMaxKeyBytes = 65535;  // the GGUF spec's limit on key length
// ggml itself stops at 64 (GGML_MAX_NAME); we allow longer names but not unbounded ones.
constexpr std::uint64_t kMaxTensorNameBytes = 256;
constexpr std::uint32_t kMaxDims = 4;
// Real files hold tens of keys and at most a few thousand tensors. Each key or tensor costs
// ~200 bytes of map nodes and strings, several times the 14 or 33 bytes it takes in the
// file, so without these caps a file of tiny entries would cost many times its size.
constexpr std::uint64_t kMaxKvCount = std::uint64_t{1} << 16;
constexpr std::uint64_t kMaxTensorCount = std::uint64_t{1} << 20;
// Real metadata stays under ~32 MiB (a 256k vocabulary with scores and merges, an embedded
// tokenizer.json). Values are views into the mapping, so this bounds what readers may
// later copy out of it (vocabularies, score arrays), not the reading itself.
constexpr std::uint64_t kMaxMetadataBytes = std::uint64_t{256} << 20;
// Smallest possible encodings, used to bound counts before anything is allocated.
// read_header(): the first read, and the most it reads (the metadata limit above plus tensor
// infos of 2^20 tensors at up to ~300 bytes each).
constexpr std::uint64_t kFirstHeaderRead = std::uint64_t{1} << 20;
constexpr std::uint64_t kMaxHeaderRead = kMaxMetadataBytes + (std::uint64_t{320} << 20);
constexpr std::uint64_t kMinKvBytes = 8 + 1 + 4 + 1;                  // key len, key, type, uint8
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;  // name, 1 dim, type, offset

struct Header {
  std::uint32_t version = 0;
  std::uint64_t n_tensors = 0;
  std::uint64_t n_kv = 0;
};

void check_count(std::uint64_t count, std::uint64_t min_bytes, std::uint64_t remaining,
                 std::string_view what) {
  if (count > remaining / min_bytes) {
    throw_error<ModelError>(
        "{} {}{} is impossible: each needs at least {} bytes and only {} bytes remain", what, count,
        signed_hint(count), min_bytes, remaining);
  }
}

void check_version(std::uint32_t version) {
  if (version > 3 && (version & 0xffffu) == 0) {
    throw_error<ModelError>(
        "big-endian GGUF is not supported (version field reads 0x{:08x}, i.e. version {} with "
        "its bytes swapped)",
        version, __builtin_bswap32(version));
  }
  if (version == 0) throw_error<ModelError>("GGUF version 0 is invalid");
  if (version == 1) {
    throw_error<ModelError>(
        "GGUF version 1 is not supported (it used 32-bit counts); re-convert the model with a "
        "current llama.cpp");
  }
  if (version > 3) {
    throw_error<ModelError>("GGUF version {} is not supported (this reader reads versions 2 and 3)",
                            version);
  }
}

Header read_gguf_header(ByteReader& r) {
  if (r.size() < 4) {
    throw_error<ModelError>("not a GGUF file: {} bytes, too short for the magic", r.size());
  }
  const std::string_view magic = r.read_bytes(4, "magic");
  if (magic == "FUGG") throw_error<ModelError>("big-endian GGUF is not supported (magic 'FUGG')");
  // Only a known magic is shown: other bytes are the start of some other file, and an error
  // message must not show a file's contents (a link named .gguf may lead anywhere).
  constexpr std::array<std::string_view, 6> kOlderMagics{"GGML", "GGMF", "GGJT",
                                                         "lmgg", "fmgg", "tjgg"};
  if (magic != "GGUF" &&
      std::find(kOlderMagics.begin(), kOlderMagics.end(), magic) == kOlderMagics.end()) {
    throw_error<ModelError>("not a GGUF file: it does not start with the magic 'GGUF'");
  }
  if (magic != "GGUF") {
    throw_error<ModelError>(
        "not a GGUF file: magic is {:02x} {:02x} {:02x} {:02x} ('{}'), expected 47 47 55 46 "
        "('GGUF')",
        static_cast<unsigned char>(magic[0]), static_cast<unsigned char>(magic[1]),
        static_cast<unsigned char>(magic[2]), static_cast<unsigned char>(magic[3]),
        escape_bytes(magic));
  }
  Header h;
  h.version = r.read<std::uint32_t>("version");
  check_version(h.version);
  h.n_tensors = r.read<std::uint64_t>("tensor count");
  h.n_kv = r.read<std::uint64_t>("metadata count");
  check_count(h.n_kv, kMinKvBytes, r.remaining(), "metadata count");
  check_count(h.n_tensors, kMinTensorInfoBytes, r.remaining(), "tensor count");
  if (h.n_kv > kMaxKvCount) {
    throw_error<ModelError>("metadata count {} is over the limit of {} keys", h.n_kv, kMaxKvCount);
  }
  if (h.n_tensors > kMaxTensorCount) {
    throw_error<ModelError>("tensor count {} is over the limit of {} tensors", h.n_tensors,
                            kMaxTensorCount);
  }
  if (h.n_kv * kMinKvBytes + h.n_tensors * kMinTensorInfoBytes > r.remaining()) {
    throw_error<ModelError>(
        "{} metadata entries and {} tensor infos cannot fit in the {} bytes after the header",
        h.n_kv, h.n_tensors, r.remaining());
  }
  return h;
}

void read_metadata(ByteReader& r, std::uint64_t n_kv, std::vector<std::string>& order,
                   std::map<std::string, GgufValue, std::less<>>& metadata) {
  order.reserve(n_kv);
  const std::uint64_t start = r.pos();
  for (std::uint64_t i = 0; i < n_kv; ++i) {
    const std::uint64_t at = r.pos();
    const auto key_len = r.read<std::uint64_t>("metadata key length");
    if (key_len == 0) throw_error<ModelError>("metadata key #{} at offset {} is empty", i, at);
    if (key_len > kMaxKeyBytes) {
      throw_error<ModelError>(
          "metadata key #{} at offset {}: length {}{} exceeds the {}-byte limit", i, at, key_len,
          signed_hint(key_len), kMaxKeyBytes);
    }
    std::string key(r.read_bytes(key_len, "metadata key"));
    if (!is_valid_utf8(key)) {
      throw_error<ModelError>("metadata key #{} at offset {} is not valid UTF-8: \"{}\"", i, at,
                              escape_bytes(key));
    }
    if (metadata.count(key) != 0) {
      throw_error<ModelError>("metadata key {} appears twice (again at offset {})",
                              printable_prefix(key), at);
    }
    try {
      const GgufType type = read_gguf_type(r, "value type");
      metadata.emplace(key, read_gguf_value(r, type, 0));
    } catch (const ModelError& e) {
      throw_error<ModelError>("metadata {}: {}", key, e.what());
    } catch (const std::bad_alloc&) {
      throw_error<ModelError>("metadata {}: out of memory reading its value", key);
    }
    // One value costs at most a walk of its elements, so checking after each is enough.
    if (r.pos() - start > kMaxMetadataBytes) {
      throw_error<ModelError>(
          "metadata {}: the metadata reaches {} bytes at offset {}, over the limit of {} bytes",
          key, r.pos() - start, r.pos(), kMaxMetadataBytes);
    }
    order.push_back(std::move(key));
  }
}

std::uint64_t read_alignment(const std::map<std::string, GgufValue, std::less<>>& metadata) {
  const auto it = metadata.find("general.alignment");
  if (it == metadata.end()) return kDefaultAlignment;
  const GgufValue& v = it->second;
  std::uint64_t a = 0;
  if (const auto* u = std::get_if<std::uint64_t>(&v.value); u && v.is_integer()) {
    a = *u;
  } else if (const auto* s = std::get_if<std::int64_t>(&v.value); s && v.is_integer() && *s >= 0) {
    a = static_cast<std::uint64_t>(*s);
  } else {
    throw_error<ModelError>("general.alignment: expected a positive integer, found {}",
                            gguf_type_name(v.type));
  }
  if (a == 0) throw_error<ModelError>("general.alignment is 0; it must be a power of two");
  if ((a & (a - 1)) != 0) {
    throw_error<ModelError>("general.alignment {} is not a power of two", a);
  }
  return a;
}

// name, n_dims, dims, type and offset of one tensor; sizes computed with overflow checks.
void read_tensor_shape(ByteReader& r, GgufTensor& t) {
  const auto n_dims = r.read<std::uint32_t>("n_dims");
  if (n_dims == 0 || n_dims > kMaxDims) {
    throw_error<ModelError>("{} dims; 1 to {} are supported", n_dims, kMaxDims);
  }
  std::int64_t n_elements = 1;
  for (std::uint32_t d = 0; d < n_dims; ++d) {
    t.dims.push_back(r.read<std::int64_t>("dim"));
    if (t.dims.back() <= 0) {
      throw_error<ModelError>("dim {} is {}; every dim must be positive", d, t.dims.back());
    }
    if (__builtin_mul_overflow(n_elements, t.dims.back(), &n_elements)) {
      throw_error<ModelError>("element count of dims [{}] overflows 64 bits",
                              fmt::join(t.dims, ", "));
    }
  }
  const auto raw_type = r.read<std::uint32_t>("tensor type");
  const auto info = tensor_type_info(raw_type);
  if (!info) throw_error<ModelError>("unknown tensor type {}", raw_type);
  t.type = info->type;
  if (t.dims[0] % info->block_elems != 0) {
    throw_error<ModelError>("row length {} is not a multiple of the {} block size {}", t.dims[0],
                            info->name, info->block_elems);
  }
  std::int64_t n_bytes = 0;
  if (__builtin_mul_overflow(n_elements / info->block_elems, info->block_bytes, &n_bytes)) {
    throw_error<ModelError>("byte size of {} {} elements overflows 64 bits", n_elements,
                            info->name);
  }
  t.n_bytes = static_cast<std::uint64_t>(n_bytes);
  t.offset = r.read<std::uint64_t>("tensor data offset");
}

GgufTensor read_tensor_info(ByteReader& r, std::uint64_t index) {
  const std::uint64_t at = r.pos();
  const auto len = r.read<std::uint64_t>("tensor name length");
  if (len == 0) throw_error<ModelError>("tensor #{} at offset {}: name is empty", index, at);
  if (len > kMaxTensorNameBytes) {
    throw_error<ModelError>("tensor #{} at offset {}: name length {}{} exceeds the {}-byte limit",
                            index, at, len, signed_hint(len), kMaxTensorNameBytes);
  }
  GgufTensor t;
  t.name = r.read_bytes(len, "tensor name");
  if (!is_valid_utf8(t.name)) {
    throw_error<ModelError>("tensor #{} at offset {}: name is not valid UTF-8: \"{}\"", index, at,
                            escape_bytes(t.name));
  }
  try {
    read_tensor_shape(r, t);
  } catch (const ModelError& e) {
    throw_error<ModelError>("tensor {}: {}", t.name, e.what());
  }
  return t;
}

// Offsets must be aligned, inside the file, and packed: each tensor starts where the one
// before it ends, rounded up to the alignment (which is how every GGUF writer lays them out).
void check_data_ranges(const std::vector<GgufTensor>& tensors, std::uint64_t data_offset,
                       std::uint64_t alignment, std::uint64_t file_size) {
  for (const auto& t : tensors) {
    if (t.offset % alignment != 0) {
      throw_error<ModelError>("tensor {}: offset {} is not a multiple of the alignment {}", t.name,
                              t.offset, alignment);
    }
    if (data_offset > file_size || t.offset > file_size - data_offset) {
      throw_error<ModelError>(
          "tensor {}: offset {} (data section at {}) starts past end of file (size {})", t.name,
          t.offset, data_offset, file_size);
    }
    const std::uint64_t begin = data_offset + t.offset;
    if (t.n_bytes > file_size - begin) {
      throw_error<ModelError>(
          "tensor {}: data [{}, {}) runs past end of file (size {}); offset {} in the data "
          "section; the file is truncated",
          t.name, begin, begin + t.n_bytes, file_size, t.offset);
    }
  }
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return tensors[a].offset < tensors[b].offset;
  });
  std::uint64_t expected = 0;  // where the next tensor must start
  const GgufTensor* prev = nullptr;
  for (std::size_t i : order) {
    const GgufTensor& t = tensors[i];
    if (prev != nullptr && t.offset < prev->offset + prev->n_bytes) {
      throw_error<ModelError>("tensor {}: data [{}, {}) overlaps tensor {} [{}, {})", t.name,
                              t.offset, t.offset + t.n_bytes, prev->name, prev->offset,
                              prev->offset + prev->n_bytes);
    }
    if (t.offset > expected) {
      throw_error<ModelError>(
          "tensor {}: offset {} leaves a gap of {} bytes after {} (expected offset {})", t.name,
          t.offset, t.offset - expected,
          prev ? fmt::format("tensor {}", prev->name) : "the start of the data section", expected);
    }
    const std::uint64_t end = t.offset + t.n_bytes;
    expected = end + (alignment - end % alignment) % alignment;
    prev = &t;
  }
}

}  // namespace

std::int64_t GgufTensor::n_elements() const {
  return std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
}

std::int64_t GgufTensor::n_rows() const {
  if (dims.empty()) return 0;
  return std::accumulate(dims.begin() + 1, dims.end(), std::int64_t{1}, std::multiplies<>());
}

GgufFile::GgufFile(const std::string& path)
    : map_(std::in_place, path), path_(path), file_size_(map_->size()) {
  parse(map_->bytes());
  for (auto& t : tensors_) t.data = map_->data() + data_offset_ + t.offset;
}

GgufFile GgufFile::read_header(const std::string& path) {
  GgufFile file;
  file.path_ = path;
  const HeaderFile opened = open_header_file(path);
  file.file_size_ = opened.size;
  // Real headers take a few KB to tens of MB; read a little, then what the parse asks for.
  std::uint64_t want = std::min(file.file_size_, kFirstHeaderRead);
  while (true) {
    file.header_.resize(want);
    if (opened.file.read_at(0, file.header_.data(), want) != want) {
      throw_error<ModelError>("{}: cannot read its first {} bytes", path, want);
    }
    try {
      file.parse(file.header_);
      return file;
    } catch (const NeedMoreBytes& more) {
      if (more.bytes > kMaxHeaderRead) {
        throw_error<ModelError>("{}: the header reaches offset {}, over the limit of {} bytes",
                                path, more.bytes, kMaxHeaderRead);
      }
      want = std::min(file.file_size_, std::max(more.bytes, 4 * want));
    }
  }
}

void GgufFile::parse(std::span<const std::uint8_t> bytes) {
  key_order_.clear();
  metadata_.clear();
  tensors_.clear();
  tensor_index_.clear();
  try {
    ByteReader r(bytes, file_size_);
    const Header h = read_gguf_header(r);
    version_ = h.version;
    read_metadata(r, h.n_kv, key_order_, metadata_);
    alignment_ = read_alignment(metadata_);
    tensors_.reserve(h.n_tensors);
    for (std::uint64_t i = 0; i < h.n_tensors; ++i) {
      GgufTensor t = read_tensor_info(r, i);
      if (!tensor_index_.emplace(t.name, tensors_.size()).second) {
        throw_error<ModelError>("tensor {} appears twice (tensor #{} and #{})", t.name,
                                tensor_index_.at(t.name), i);
      }
      tensors_.push_back(std::move(t));
    }
    // The data section starts at the next multiple of the alignment (overflow-safe).
    const std::uint64_t pad = (alignment_ - r.pos() % alignment_) % alignment_;
    data_offset_ = r.pos() + pad;
    check_data_ranges(tensors_, data_offset_, alignment_, file_size_);
  } catch (const ModelError& e) {
    throw_error<ModelError>("{}: {}", path_, e.what());
  } catch (const std::bad_alloc&) {
    throw_error<ModelError>("{}: out of memory while reading the GGUF header", path_);
  } catch (const std::length_error& e) {
    throw_error<ModelError>("{}: while reading the GGUF header: {}", path_, e.what());
  }
}

const GgufTensor* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensor& GgufFile::tensor(std::string_view name) const {
  const GgufTensor* t = find_tensor(name);
  if (t == nullptr) throw_error<ModelError>("tensor {}: not found in {}", name, path());
  return *t;
}

}  // namespace kvscope
