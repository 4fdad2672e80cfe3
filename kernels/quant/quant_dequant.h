// The per-block math of the quantized weight types, shared by the CUDA kernels and their
// CPU tests: plain C++ that nvcc and g++ both compile (no CUDA header is needed by g++).
// Block layouts are ggml's (engine/quant/quant_blocks.h); the reference is the engine's
// dequantize_row / dot_row, which tests/kernels/quant_dequant_test.cpp checks these against
// on the host, lane by lane, so the index math is tested without a GPU.
//
// Each codec has:
//   value(block, i)    value i of a block, bit for bit as dequantize_row computes it (byte
//                      loads only: usable at any alignment);
//   load_x(xb, part, xv)  the kXPart activations that part `part` of a block multiplies;
//   load(block, part)  every weight byte the part needs, into registers (a Raw struct);
//   dot(raw, xv)       that part's share of the block's dot product (register math only);
//   load_xq / dot_q8   the same with 8-bit activations (quant_activations.h): integer dot
//                      products of the weight quants and the activation codes.
// The matvec kernel splits every block kParts ways over the lanes of a warp, so one warp
// step covers 32 / kParts consecutive blocks of a row: contiguous bytes (lane_dots below).
//
// Vector loads in load / load_x are only issued at addresses whose alignment follows
// from the block size: each codec's kAlign is what its load() needs at a block start, and
// its block size is a multiple of it, so a row (or a stacked matrix part) starting at a
// multiple of kAlign keeps every block aligned. Q4_K (144 B) and Q5_K (176 B) need 16,
// Q4_1 (20 B) and Q5_1 (24 B) 4, and Q4_0 (18 B), Q5_0 (22 B), Q8_0 (34 B), Q6_K (210 B)
// only 2: those read 16-bit halves. x must be 16-byte aligned. On the host the same loads
// check their alignment and throw std::logic_error, the fault a GPU would raise.
#pragma once

#include "quant/quant_codec_base.h"
#include "quant/quant_codec_k.h"
#include "quant/quant_codec_legacy.h"

namespace kvscope::cuda::qd {

// Every block of a row starts aligned as its first does.
static_assert(Q4_0::kBytes % Q4_0::kAlign == 0 && Q4_1::kBytes % Q4_1::kAlign == 0 &&
              Q5_0::kBytes % Q5_0::kAlign == 0 && Q5_1::kBytes % Q5_1::kAlign == 0 &&
              Q8_0::kBytes % Q8_0::kAlign == 0 && Q4_K::kBytes % Q4_K::kAlign == 0 &&
              Q5_K::kBytes % Q5_K::kAlign == 0 && Q6_K::kBytes % Q6_K::kAlign == 0);

// --- Rows -------------------------------------------------------------------------------

// Value c of a stored row (embedding lookups, the fp16 scratch of prompt GEMMs).
template <class Codec>
KVSCOPE_HD float row_value(const std::uint8_t* row, std::int64_t c) {
  return Codec::value(row + (c / Codec::kValues) * Codec::kBytes,
                      static_cast<int>(c % Codec::kValues));
}

// The activations a lane multiplies a block part with: floats (load_x / dot) ...
template <class Codec>
struct FloatActivations {
  const float* x;  // [cols], 16-byte aligned
  struct Part {
    float v[Codec::kXPart];
  };
  KVSCOPE_HD void load(int block, int part, Part& p) const {
    Codec::load_x(x + block * Codec::kValues, part, p.v);
  }
  // token t's row of a [n_tokens][cols] batch
  KVSCOPE_HD FloatActivations token(std::int64_t t, std::int64_t cols) const {
    return {x + t * cols};
  }
  static KVSCOPE_HD float dot(const typename Codec::Raw& raw, const Part& p) {
    return Codec::dot(raw, p.v);
  }
};

// ... or 8-bit codes (quant_activations.h: load_xq / dot_q8).
template <class Codec>
struct Q8Activations {
  const std::int8_t* q;  // [cols], 16-byte aligned
  const float* d;        // [cols / 32] scales, 16-byte aligned
  using Part = XQ8Part;
  KVSCOPE_HD void load(int block, int part, Part& p) const { Codec::load_xq(q, d, block, part, p); }
  KVSCOPE_HD Q8Activations token(std::int64_t t, std::int64_t cols) const {
    return {q + t * cols, d + t * (cols / 32)};
  }
  static KVSCOPE_HD float dot(const typename Codec::Raw& raw, const Part& p) {
    return Codec::dot_q8(raw, p);
  }
};

// acc[r] += lane `lane`'s share of rows[r] . x for R rows of n_blocks blocks: the matvec
// kernels' whole per-lane work (the warp then sums acc over its lanes). Lane l takes part
// l % kParts of blocks l / kParts + k * kStep, so each warp step reads kStep consecutive
// blocks of every row, contiguous bytes; the activations are loaded once per step for all R
// rows. Every load of kUnroll steps is issued before their math, so that many steps are in
// flight. rows[r]: 16-byte aligned row starts (cudaMalloc base + r * row_bytes).
template <class Codec, int R, class Acts>
KVSCOPE_HD void lane_dots(const std::uint8_t* const* rows, const Acts& acts, int n_blocks, int lane,
                          float* acc) {
  constexpr int kStep = kLanes / Codec::kParts;
  constexpr int kU = Codec::kUnroll;
  const int part = lane % Codec::kParts;
  int b = lane / Codec::kParts;
  for (; b + (kU - 1) * kStep < n_blocks; b += kU * kStep) {
    typename Codec::Raw raw[kU][R];
    typename Acts::Part xp[kU];
    KVSCOPE_UNROLL
    for (int u = 0; u < kU; ++u) {
      const int bu = b + u * kStep;
      acts.load(bu, part, xp[u]);
      KVSCOPE_UNROLL
      for (int r = 0; r < R; ++r) raw[u][r] = Codec::load(rows[r] + bu * Codec::kBytes, part);
    }
    KVSCOPE_UNROLL
    for (int u = 0; u < kU; ++u) {
      KVSCOPE_UNROLL
      for (int r = 0; r < R; ++r) acc[r] += Acts::dot(raw[u][r], xp[u]);
    }
  }
  for (; b < n_blocks; b += kStep) {  // the last < kUnroll steps
    typename Acts::Part xp;
    acts.load(b, part, xp);
    KVSCOPE_UNROLL
    for (int r = 0; r < R; ++r) {
      acc[r] += Acts::dot(Codec::load(rows[r] + b * Codec::kBytes, part), xp);
    }
  }
}

}  // namespace kvscope::cuda::qd
