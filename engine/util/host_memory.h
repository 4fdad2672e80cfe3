// This machine's physical memory.
#pragma once

#include <cstdint>

namespace kvscope {

// Bytes of physical memory (sysconf), 0 when the OS does not say.
std::uint64_t host_memory_bytes();

}  // namespace kvscope
