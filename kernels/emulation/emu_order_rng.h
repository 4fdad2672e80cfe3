// The shuffled orders of the CUDA emulation's blocks, warps and lanes (emu_block.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace kvscope::emu {

// A small, fast generator for the orders (a splitmix64 stream): shuffling is done per round,
// so std::mt19937_64 and uniform_int_distribution would cost more than the lanes' work.
class OrderRng {
 public:
  explicit OrderRng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  template <class T>
  void shuffle(T* v, std::size_t n) {
    for (std::size_t i = n; i > 1; --i) {
      // a draw in [0, i) by multiply and shift, without a division
      const auto j = static_cast<std::size_t>(((next() >> 32) * i) >> 32);
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  std::uint64_t state_;
};

}  // namespace kvscope::emu
