// Q4_K, Q5_K and Q6_K: super-blocks of 256 values with per-sub-block scales (and mins for
// Q4_K/Q5_K) quantized against one fp16 super-scale. Each super-block is unpacked into
// 256 small integers so dequantize and the dot product share one reading of the layout;
// the dot product then works per sub-block: d_j * sum q*x - m_j * sum x.
// The quantizers follow ggml's quantize_row_q{4,5,6}_K_ref: a weighted least-squares search
// over candidate scales per sub-block (make_qkx2_quants / make_qx_quants), then the scales
// themselves are quantized and the values requantized against the stored scales.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/quant_blocks.h"

namespace kvscope::quants {

namespace {

constexpr int kSubBlocks = kQK_K / 32;  // Q4_K/Q5_K sub-blocks of 32 values
constexpr int kGroups = kQK_K / 16;     // Q6_K groups of 16 values
// Below this a group counts as all zero (ggml's GROUP_MAX_EPS).
constexpr float kGroupMaxEps = 1e-15f;

// q[256] = 4-bit quants of a Q4_K block, in value order.
void unpack_q4_K(const BlockQ4_K& b, std::int8_t* q) {
  for (int c = 0; c < kQK_K / 64; ++c) {
    for (int l = 0; l < 32; ++l) {
      q[64 * c + l] = static_cast<std::int8_t>(b.qs[32 * c + l] & 0xF);
      q[64 * c + 32 + l] = static_cast<std::int8_t>(b.qs[32 * c + l] >> 4);
    }
  }
}

// q[256] = 5-bit quants of a Q5_K block, in value order.
void unpack_q5_K(const BlockQ5_K& b, std::int8_t* q) {
  for (int c = 0; c < kQK_K / 64; ++c) {
    for (int l = 0; l < 32; ++l) {
      const int hi0 = ((b.qh[l] >> (2 * c)) & 1) << 4;
      const int hi1 = ((b.qh[l] >> (2 * c + 1)) & 1) << 4;
      q[64 * c + l] = static_cast<std::int8_t>((b.qs[32 * c + l] & 0xF) | hi0);
      q[64 * c + 32 + l] = static_cast<std::int8_t>((b.qs[32 * c + l] >> 4) | hi1);
    }
  }
}

// q[256] = 6-bit quants of a Q6_K block minus 32, in value order.
void unpack_q6_K(const BlockQ6_K& b, std::int8_t* q) {
  for (int h = 0; h < kQK_K / 128; ++h, q += 128) {
    const std::uint8_t* ql = b.ql + 64 * h;
    const std::uint8_t* qh = b.qh + 32 * h;
    for (int l = 0; l < 32; ++l) {
      q[l] = static_cast<std::int8_t>(((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
      q[l + 32] = static_cast<std::int8_t>(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
      q[l + 64] = static_cast<std::int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
      q[l + 96] = static_cast<std::int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
    }
  }
}

// Sub-block j of a Q4_K/Q5_K block decodes as scale[j] * q - min[j].
template <class Block>
void k4_scales(const Block& b, float* scale, float* min) {
  const float d = b.d.to_float();
  const float dmin = b.dmin.to_float();
  for (int j = 0; j < kSubBlocks; ++j) {
    std::uint8_t sc = 0;
    std::uint8_t m = 0;
    scale_min_k4(j, b.scales, sc, m);
    scale[j] = d * sc;
    min[j] = dmin * m;
  }
}

template <class Block, void (*unpack)(const Block&, std::int8_t*)>
void dequantize_k4(const void* src, float* dst, std::int64_t n) {
  const auto* blocks = static_cast<const Block*>(src);
  std::int8_t q[kQK_K];
  float scale[kSubBlocks];
  float min[kSubBlocks];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack(blocks[b], q);
    k4_scales(blocks[b], scale, min);
    for (int i = 0; i < kQK_K; ++i, ++dst) *dst = scale[i / 32] * q[i] - min[i / 32];
  }
}

template <class Block, void (*unpack)(const Block&, std::int8_t*)>
float dot_k4(const void* row, const float* x, std::int64_t n) {
  const auto* blocks = static_cast<const Block*>(row);
  std::int8_t q[kQK_K];
  float scale[kSubBlocks];
  float min[kSubBlocks];
  float total = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack(blocks[b], q);
    k4_scales(blocks[b], scale, min);
    for (int j = 0; j < kSubBlocks; ++j, x += 32) {
      float qx = 0.0f;
      float sx = 0.0f;
      dot_and_sum<32>(q + 32 * j, x, qx, sx);
      total += scale[j] * qx - min[j] * sx;
    }
  }
  return total;
}

// Weighted squared error of value = scale * L + min against x over n values.
float weighted_error(int n, const float* x, const float* w, const std::uint8_t* L, float scale,
                     float min) {
  float error = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float diff = scale * L[i] + min - x[i];
    error += w[i] * (diff * diff);
  }
  return error;
}

// ggml's make_qkx2_quants (squared-error variant): finds scale and min <= 0 so that
// x ~ scale * L + min with L in [0, nmax], trying nstep + 1 candidate scales around
// nmax / (max - min) and a weighted least-squares fit for each. Returns the scale and
// sets neg_min = -min.
float make_qkx2_quants(int n, int nmax, const float* x, const float* w, std::uint8_t* L,
                       float& neg_min, float rmin, float rdelta, int nstep) {
  float min = x[0];
  float max = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  min = std::min(min, 0.0f);
  if (max == min) {
    std::fill(L, L + n, std::uint8_t{0});
    neg_min = -min;
    return 0.0f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<std::uint8_t>(std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax));
  }
  float best_error = weighted_error(n, x, w, L, scale, min);
  std::uint8_t Laux[32];
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sum_l = 0.0f;
    float sum_l2 = 0.0f;
    float sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = static_cast<std::uint8_t>(l);
      sum_l += w[i] * l;
      sum_l2 += w[i] * l * l;
      sum_xl += w[i] * l * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (!(D > 0)) continue;  // also skips a NaN determinant, as ggml does
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
    if (this_min > 0) {
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    const float error = weighted_error(n, x, w, Laux, this_scale, this_min);
    if (error < best_error) {
      std::copy(Laux, Laux + n, L);
      best_error = error;
      scale = this_scale;
      min = this_min;
    }
  }
  neg_min = -min;
  return scale;
}

// Shared front half of the Q4_K/Q5_K quantizers: per-sub-block scale/min search, the
// 6-bit packing of scales and mins into `block`, and L[256] requantized against the scales
// as stored (so rounding of d/dmin to fp16 is accounted for).
template <class Block>
void quantize_k4_scales(const float* x, int nmax, float rmin, float rdelta, int nstep, Block& y,
                        std::uint8_t* L) {
  float scales[kSubBlocks];
  float mins[kSubBlocks];
  float max_scale = 0.0f;
  float max_min = 0.0f;
  for (int j = 0; j < kSubBlocks; ++j) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0.0f;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    float weights[32];
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[j] = make_qkx2_quants(32, nmax, xs, weights, L + 32 * j, mins[j], rmin, rdelta, nstep);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  std::uint8_t ls[kSubBlocks];
  std::uint8_t lm[kSubBlocks];
  for (int j = 0; j < kSubBlocks; ++j) {
    // The uint8 wrap before the clamp mirrors ggml for (impossible) negative scales.
    ls[j] =
        std::min<std::uint8_t>(63, static_cast<std::uint8_t>(nearest_int(inv_scale * scales[j])));
    lm[j] = std::min<std::uint8_t>(63, static_cast<std::uint8_t>(nearest_int(inv_min * mins[j])));
  }
  pack_scale_min_k4(ls, lm, y.scales);
  y.d = Half::from_float(max_scale / 63.0f);
  y.dmin = Half::from_float(max_min / 63.0f);

  for (int j = 0; j < kSubBlocks; ++j) {
    std::uint8_t sc = 0;
    std::uint8_t m = 0;
    scale_min_k4(j, y.scales, sc, m);
    const float d = y.d.to_float() * sc;
    if (d == 0.0f) continue;
    const float dm = y.dmin.to_float() * m;
    for (int i = 0; i < 32; ++i) {
      L[32 * j + i] =
          static_cast<std::uint8_t>(std::clamp(nearest_int((x[32 * j + i] + dm) / d), 0, nmax));
    }
  }
}

// ggml's make_qx_quants with rmse_type 1 (weights x^2, no importance matrix): symmetric
// quants L - nmax in [-nmax, nmax - 1] for 16 values, trying 19 candidate scales.
float make_qx_quants(int n, int nmax, const float* x, std::int8_t* L) {
  float max = 0.0f;
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, std::int8_t{0});
    return 0.0f;
  }
  // Fills L (when `store`) and the weighted sums for one candidate inverse scale.
  auto fit = [&](float iscale, bool store, float& sumlx, float& suml2) {
    sumlx = 0.0f;
    suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      if (store) L[i] = static_cast<std::int8_t>(l + nmax);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
  };
  float sumlx = 0.0f;
  float suml2 = 0.0f;
  fit(-nmax / max, true, sumlx, suml2);
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    const float iscale = -(nmax + 0.1f * is) / max;
    fit(iscale, false, sumlx, suml2);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      fit(iscale, true, sumlx, suml2);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

void quantize_q6_K_block(const float* x, BlockQ6_K& y) {
  std::int8_t L[kQK_K];
  float scales[kGroups];
  float max_scale = 0.0f;
  float max_abs_scale = 0.0f;
  for (int g = 0; g < kGroups; ++g) {
    scales[g] = make_qx_quants(16, 32, x + 16 * g, L + 16 * g);
    if (std::fabs(scales[g]) > max_abs_scale) {
      max_abs_scale = std::fabs(scales[g]);
      max_scale = scales[g];
    }
  }
  if (max_abs_scale < kGroupMaxEps) {
    std::memset(&y, 0, sizeof(y));
    return;
  }
  const float iscale = -128.0f / max_scale;
  y.d = Half::from_float(1 / iscale);
  for (int g = 0; g < kGroups; ++g) {
    y.scales[g] = static_cast<std::int8_t>(std::min(127, nearest_int(iscale * scales[g])));
  }
  for (int g = 0; g < kGroups; ++g) {
    const float d = y.d.to_float() * y.scales[g];
    if (d == 0.0f) continue;
    for (int i = 0; i < 16; ++i) {
      L[16 * g + i] =
          static_cast<std::int8_t>(std::clamp(nearest_int(x[16 * g + i] / d), -32, 31) + 32);
    }
  }
  for (int h = 0; h < kQK_K / 128; ++h) {
    const std::int8_t* Lh = L + 128 * h;
    std::uint8_t* ql = y.ql + 64 * h;
    std::uint8_t* qh = y.qh + 32 * h;
    for (int l = 0; l < 32; ++l) {
      ql[l] = static_cast<std::uint8_t>((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
      ql[l + 32] = static_cast<std::uint8_t>((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
      qh[l] = static_cast<std::uint8_t>((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) |
                                        ((Lh[l + 64] >> 4) << 4) | ((Lh[l + 96] >> 4) << 6));
    }
  }
}

}  // namespace

void dequantize_q4_K(const void* src, float* dst, std::int64_t n) {
  dequantize_k4<BlockQ4_K, unpack_q4_K>(src, dst, n);
}
void dequantize_q5_K(const void* src, float* dst, std::int64_t n) {
  dequantize_k4<BlockQ5_K, unpack_q5_K>(src, dst, n);
}
float dot_q4_K(const void* row, const float* x, std::int64_t n) {
  return dot_k4<BlockQ4_K, unpack_q4_K>(row, x, n);
}
float dot_q5_K(const void* row, const float* x, std::int64_t n) {
  return dot_k4<BlockQ5_K, unpack_q5_K>(row, x, n);
}

void dequantize_q6_K(const void* src, float* dst, std::int64_t n) {
  const auto* blocks = static_cast<const BlockQ6_K*>(src);
  std::int8_t q[kQK_K];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack_q6_K(blocks[b], q);
    const float d = blocks[b].d.to_float();
    for (int i = 0; i < kQK_K; ++i, ++dst) *dst = d * blocks[b].scales[i / 16] * q[i];
  }
}

float dot_q6_K(const void* row, const float* x, std::int64_t n) {
  const auto* blocks = static_cast<const BlockQ6_K*>(row);
  std::int8_t q[kQK_K];
  float total = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack_q6_K(blocks[b], q);
    const float d = blocks[b].d.to_float();
    for (int g = 0; g < kGroups; ++g, x += 16) {
      total += d * blocks[b].scales[g] * dot_q<16>(q + 16 * g, x);
    }
  }
  return total;
}

void quantize_q4_K(const float* x, void* dst, std::int64_t n) {
  auto* y = static_cast<BlockQ4_K*>(dst);
  std::uint8_t L[kQK_K];
  for (std::int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    quantize_k4_scales(x, 15, -1.0f, 0.1f, 20, y[b], L);
    for (int c = 0; c < kQK_K / 64; ++c) {
      for (int l = 0; l < 32; ++l) {
        y[b].qs[32 * c + l] = static_cast<std::uint8_t>(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
      }
    }
  }
}

void quantize_q5_K(const float* x, void* dst, std::int64_t n) {
  auto* y = static_cast<BlockQ5_K*>(dst);
  std::uint8_t L[kQK_K];
  for (std::int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    quantize_k4_scales(x, 31, -0.5f, 0.1f, 15, y[b], L);
    std::memset(y[b].qh, 0, sizeof(y[b].qh));
    for (int c = 0; c < kQK_K / 64; ++c) {
      for (int l = 0; l < 32; ++l) {
        const int l0 = L[64 * c + l];
        const int l1 = L[64 * c + 32 + l];
        y[b].qs[32 * c + l] = static_cast<std::uint8_t>((l0 & 0xF) | ((l1 & 0xF) << 4));
        y[b].qh[l] = static_cast<std::uint8_t>(y[b].qh[l] | ((l0 >> 4) << (2 * c)) |
                                               ((l1 >> 4) << (2 * c + 1)));
      }
    }
  }
}

void quantize_q6_K(const float* x, void* dst, std::int64_t n) {
  auto* y = static_cast<BlockQ6_K*>(dst);
  for (std::int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) quantize_q6_K_block(x, y[b]);
}

}  // namespace kvscope::quants
