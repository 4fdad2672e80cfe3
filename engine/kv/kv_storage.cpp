#include "kv/kv_storage.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <new>

#include "util/error.h"

namespace kvscope {
namespace {

constexpr std::align_val_t kAlignment{64};

}  // namespace

void KvStorage::AlignedDelete::operator()(std::uint8_t* p) const {
  ::operator delete(p, kAlignment);
}

KvStorage::KvStorage(std::int64_t n_blocks, std::int64_t block_bytes)
    : n_blocks_(n_blocks), block_bytes_(block_bytes) {
  if (n_blocks < 0 || block_bytes < 1 ||
      (n_blocks > 0 && block_bytes > std::numeric_limits<std::int64_t>::max() / n_blocks)) {
    throw_error<UsageError>("KV storage: invalid size {} blocks x {} bytes", n_blocks, block_bytes);
  }
  const auto bytes = static_cast<std::size_t>(n_blocks * block_bytes);
  if (bytes == 0) return;
  try {
    bytes_.reset(static_cast<std::uint8_t*>(::operator new(bytes, kAlignment)));
  } catch (const std::bad_alloc&) {
    throw_error<CapacityError>(
        "KV storage: cannot allocate {} bytes of host memory ({} blocks x {} bytes)", bytes,
        n_blocks, block_bytes);
  }
}

std::int64_t KvStorage::offset(BlockId id) const {
  if (id < 0 || id >= n_blocks_) {
    throw_error<UsageError>("KV storage: block id {} out of range [0, {})", id, n_blocks_);
  }
  return static_cast<std::int64_t>(id) * block_bytes_;
}

std::uint8_t* KvStorage::block(BlockId id) {
  return bytes_.get() + offset(id);
}

const std::uint8_t* KvStorage::block(BlockId id) const {
  return bytes_.get() + offset(id);
}

void KvStorage::copy_block(BlockId src, BlockId dst) {
  if (src == dst) return;
  std::memcpy(block(dst), block(src), static_cast<std::size_t>(block_bytes_));
}

}  // namespace kvscope
