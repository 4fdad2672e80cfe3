// The portable kernels of quant_dot.h: plain C++ that does, lane for lane, what the SIMD
// kernels (quant_dot_x86.h) do, so the two give the same bits.
//
// Per 32-value block i of a weight row and activation row t:
//   p[j]      = sum_{k<4} w[4j+k] * q[4j+k]                   (8 integer lanes, exact)
//   acc_e[j]  = fma(float(p[j]), scale[j] * d_t, acc_e[j])    (e = i % 2: two chains, so
//                                                             one FMA need not wait for the last)
//   off       = fma(min, s_t, off)                            (only formats with a minimum)
// and at the end: out = hsum8(acc_0 + acc_1) + off. Signed formats (Q4_0, Q5_0, Q8_0, Q6_K)
// multiply their recentred codes directly; formats with a minimum multiply the unsigned codes and
// add min * d_t * sum(q) once per block.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "cpu/quant_dot.h"
#include "cpu/quant_dot_table.h"
#include "quant/quant_blocks.h"
#include "util/half.h"

namespace kvscope::quant_dot_detail {

namespace {

using quants::BlockQ4_0;
using quants::BlockQ4_1;
using quants::BlockQ4_K;
using quants::BlockQ5_0;
using quants::BlockQ5_1;
using quants::BlockQ5_K;
using quants::BlockQ6_K;
using quants::BlockQ8_0;
using quants::kQK_K;

// The 8 lanes of the SIMD kernels' accumulators.
struct Lanes {
  float v[8] = {};
};

// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)): the order of hsum8 in quant_dot_x86.h.
float hsum8(const Lanes& a) {
  float t[4];
  for (int k = 0; k < 4; ++k) t[k] = a.v[k] + a.v[k + 4];
  return (t[0] + t[2]) + (t[1] + t[3]);
}

// One weight block of 32 decoded: codes w (signed, or unsigned in 0..255 when has_min) and
// the float scale of each of the 8 lanes (4 values each).
struct Block32 {
  int w[32];
  float scale[8];
  float min = 0.0f;
};

template <int NT>
struct Tile {
  Lanes acc[NT][2];
  float off[NT] = {};
  const Q8Block* x[NT];

  Tile(EncodedRows rows) {
    for (int t = 0; t < NT; ++t) x[t] = static_cast<const Q8Block*>(rows.data) + t * rows.stride;
  }

  void add(const Block32& b, std::int64_t index, bool has_min) {
    for (int t = 0; t < NT; ++t) {
      const Q8Block& a = x[t][index];
      Lanes& chain = acc[t][index & 1];
      for (int j = 0; j < 8; ++j) {
        int p = 0;
        for (int k = 0; k < 4; ++k) p += b.w[4 * j + k] * a.q[4 * j + k];
        chain.v[j] = std::fma(static_cast<float>(p), b.scale[j] * a.d, chain.v[j]);
      }
      if (has_min) off[t] = std::fma(b.min, a.s, off[t]);
    }
  }

  void store(float* out, std::int64_t out_stride) const {
    for (int t = 0; t < NT; ++t) {
      Lanes both;
      for (int j = 0; j < 8; ++j) both.v[j] = acc[t][0].v[j] + acc[t][1].v[j];
      out[t * out_stride] = hsum8(both) + off[t];
    }
  }
};

void fill_scale(Block32& b, float s) {
  for (float& v : b.scale) v = s;
}

// --- decoders: block (or sub-block) -> Block32 ------------------------------------------

void decode(const BlockQ4_0& b, Block32& o) {
  for (int j = 0; j < 16; ++j) {
    o.w[j] = (b.qs[j] & 0xF) - 8;
    o.w[j + 16] = (b.qs[j] >> 4) - 8;
  }
  fill_scale(o, b.d.to_float());
}

void decode(const BlockQ4_1& b, Block32& o) {
  for (int j = 0; j < 16; ++j) {
    o.w[j] = b.qs[j] & 0xF;
    o.w[j + 16] = b.qs[j] >> 4;
  }
  fill_scale(o, b.d.to_float());
  o.min = b.m.to_float();
}

std::uint32_t load_u32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void decode(const BlockQ5_0& b, Block32& o) {
  const std::uint32_t qh = load_u32(b.qh);
  for (int j = 0; j < 16; ++j) {
    o.w[j] = ((b.qs[j] & 0xF) | (((qh >> j) & 1) << 4)) - 16;
    o.w[j + 16] = ((b.qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - 16;
  }
  fill_scale(o, b.d.to_float());
}

void decode(const BlockQ5_1& b, Block32& o) {
  const std::uint32_t qh = load_u32(b.qh);
  for (int j = 0; j < 16; ++j) {
    o.w[j] = (b.qs[j] & 0xF) | (((qh >> j) & 1) << 4);
    o.w[j + 16] = (b.qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
  }
  fill_scale(o, b.d.to_float());
  o.min = b.m.to_float();
}

void decode(const BlockQ8_0& b, Block32& o) {
  for (int j = 0; j < 32; ++j) o.w[j] = b.qs[j];
  fill_scale(o, b.d.to_float());
}

// --- kernels -----------------------------------------------------------------------------

template <class B, bool kHasMin, int NT>
void legacy_tile(const void* row, std::int64_t n, EncodedRows x, float* out, std::int64_t os) {
  const auto* blocks = static_cast<const B*>(row);
  Tile<NT> tile(x);
  Block32 b;
  for (std::int64_t i = 0; i < n / 32; ++i) {
    decode(blocks[i], b);
    tile.add(b, i, kHasMin);
  }
  tile.store(out, os);
}

// Q4_K / Q5_K sub-block j (32 values) of a super-block: scale d*sc[j], min -dmin*m[j].
template <class B, int NT>
void k4_tile(const void* row, std::int64_t n, EncodedRows x, float* out, std::int64_t os) {
  constexpr bool kFive = std::is_same_v<B, BlockQ5_K>;
  const auto* blocks = static_cast<const B*>(row);
  Tile<NT> tile(x);
  Block32 o;
  for (std::int64_t i = 0; i < n / kQK_K; ++i) {
    const B& b = blocks[i];
    const float d = b.d.to_float(), dmin = b.dmin.to_float();
    for (int j = 0; j < 8; ++j) {
      std::uint8_t sc = 0, m = 0;
      quants::scale_min_k4(j, b.scales, sc, m);
      const int c = j / 2, shift = 4 * (j % 2);
      for (int l = 0; l < 32; ++l) {
        int u = (b.qs[32 * c + l] >> shift) & 0xF;
        if constexpr (kFive) u |= ((b.qh[l] >> j) & 1) << 4;
        o.w[l] = u;
      }
      fill_scale(o, d * static_cast<float>(sc));
      o.min = -(dmin * static_cast<float>(m));
      tile.add(o, 8 * i + j, true);
    }
  }
  tile.store(out, os);
}

// Q6_K: 8 blocks of 32 per super-block, each with two groups of 16 (lanes 0-3, 4-7).
template <int NT>
void q6_K_t(const void* row, std::int64_t n, EncodedRows x, float* out, std::int64_t os) {
  const auto* blocks = static_cast<const BlockQ6_K*>(row);
  Tile<NT> tile(x);
  Block32 o;
  for (std::int64_t i = 0; i < n / kQK_K; ++i) {
    const BlockQ6_K& b = blocks[i];
    const float d = b.d.to_float();
    for (int j = 0; j < 8; ++j) {
      const int h = j / 4, part = j % 4;  // half of 128 values, quarter inside it
      const std::uint8_t* ql = b.ql + 64 * h + 32 * (part % 2);
      const std::uint8_t* qh = b.qh + 32 * h;
      for (int l = 0; l < 32; ++l) {
        const int lo = part < 2 ? (ql[l] & 0xF) : (ql[l] >> 4);
        o.w[l] = (lo | (((qh[l] >> (2 * part)) & 3) << 4)) - 32;
      }
      for (int k = 0; k < 8; ++k) o.scale[k] = d * static_cast<float>(b.scales[2 * j + k / 4]);
      tile.add(o, 8 * i + j, false);
    }
  }
  tile.store(out, os);
}

// F16 / BF16 rows against activations of the same type, 8 lanes.
template <bool kBf16, int NT>
void half_tile(const void* row, std::int64_t n, EncodedRows x, float* out, std::int64_t os) {
  const auto* w = static_cast<const std::uint16_t*>(row);
  auto to_float = [](std::uint16_t h) {
    return kBf16 ? bf16_to_float(h) : quants::fp16_to_float_branchless(h);
  };
  for (int t = 0; t < NT; ++t) {
    const auto* a = static_cast<const std::uint16_t*>(x.data) + t * x.stride;
    Lanes acc;
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) {
        acc.v[j] = std::fma(to_float(w[i + j]), to_float(a[i + j]), acc.v[j]);
      }
    }
    float tail = 0.0f;
    for (; i < n; ++i) tail = std::fma(to_float(w[i]), to_float(a[i]), tail);
    out[t * os] = hsum8(acc) + tail;
  }
}

template <int NT>
void q4_0_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  legacy_tile<BlockQ4_0, false, NT>(r, n, x, o, os);
}
template <int NT>
void q4_1_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  legacy_tile<BlockQ4_1, true, NT>(r, n, x, o, os);
}
template <int NT>
void q5_0_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  legacy_tile<BlockQ5_0, false, NT>(r, n, x, o, os);
}
template <int NT>
void q5_1_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  legacy_tile<BlockQ5_1, true, NT>(r, n, x, o, os);
}
template <int NT>
void q8_0_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  legacy_tile<BlockQ8_0, false, NT>(r, n, x, o, os);
}
template <int NT>
void q4_K_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  k4_tile<BlockQ4_K, NT>(r, n, x, o, os);
}
template <int NT>
void q5_K_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  k4_tile<BlockQ5_K, NT>(r, n, x, o, os);
}
template <int NT>
void f16_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  half_tile<false, NT>(r, n, x, o, os);
}
template <int NT>
void bf16_t(const void* r, std::int64_t n, EncodedRows x, float* o, std::int64_t os) {
  half_tile<true, NT>(r, n, x, o, os);
}

}  // namespace

const KernelTable& portable_kernels() {
  static const KernelTable table = KVSCOPE_KERNEL_TABLE;
  return table;
}

}  // namespace kvscope::quant_dot_detail
