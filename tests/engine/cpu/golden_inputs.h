// The input generator and output hash the ggml golden-value tests share: the expected
// values were computed by real ggml on exactly these inputs, so both sides must agree.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace kvscope::test {

// The generator the golden values were made with: 40 high bits of a 64-bit LCG in
// [-scale/2, scale/2).
struct Lcg {
  std::uint64_t s;
  explicit Lcg(std::uint64_t seed) : s(seed) {}
  float next(float scale) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((static_cast<double>(s >> 40) / 16777216.0 - 0.5) * scale);
  }
};

inline std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// FNV-1a over the bytes of the floats' bit patterns.
inline std::uint64_t fnv(const std::vector<float>& v) {
  std::uint64_t h = 1469598103934665603ull;
  for (const float f : v) {
    const std::uint32_t u = bits(f);
    for (int b = 0; b < 4; ++b) {
      h ^= (u >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
  return h;
}

}  // namespace kvscope::test
