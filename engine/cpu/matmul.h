// The CPU backend's projections, y = x W^T for a stored weight W, as llama.cpp's CPU backend
// computes them: the input is encoded once for the weight's type (8-bit codes for quantized
// weights, fp16 for F16, bf16 for BF16; F32 weights take the floats in llama.cpp's exact
// order, cpu_ops.h's matvec) and every projection that reads the same input (wq, wk, wv;
// w_gate, w_up) reuses that encoding. Rows of W are split over the thread pool; each row is
// multiplied with up to kMaxTileTokens tokens at a time, so a prompt decodes each weight
// block once per tile instead of once per token.
//
// With quantized activations off (the option, or KVSCOPE_Q8_ACTIVATIONS=0) every type takes
// float activations in cpu_ops.h's matvec: the exact reference path.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cpu/quant_dot/interleaved.h"
#include "cpu/quant_dot/q8_activations.h"
#include "cpu/quant_dot/quant_dot.h"
#include "model/model.h"

namespace kvscope {

class ThreadPool;

class Matmul {
 public:
  // quantized_activations: encode activations for each weight type (llama.cpp's way);
  // false: float activations for every type. KVSCOPE_Q8_ACTIVATIONS=0 also turns it off.
  explicit Matmul(bool quantized_activations);

  bool quantized_activations() const { return quantized_; }
  // The instruction set the kernels run with.
  CpuIsa isa() const { return isa_; }

  // The input of the projections that follow: x is [n_tokens][cols] and must stay alive and
  // unchanged until the next set_input. Encodings are made when a projection first needs one.
  void set_input(std::span<const float> x, std::int64_t cols);

  // y [n_tokens][w.rows] = x W^T for the current input (w.cols must equal its cols). `sgemm`
  // is matvec's per-token summation order flag for F32 weights (cpu_ops.h). With `grouped`
  // (W re-laid in 8-row groups, interleaved.h) and quantized activations on, the grouped
  // kernels run instead of the row-at-a-time ones.
  void project(ThreadPool& pool, const WeightView& w, std::span<float> y,
               std::span<const std::uint8_t> sgemm = {},
               const InterleavedMatrix* grouped = nullptr);

  // project() with the input in two planes of 8-bit codes: x = d1 q1 + d2 q2 + e, the second
  // plane coding the first's rounding error (|x - d1 q1| <= d1 / 2 per value, so |e| is about
  // 1/254 of the first plane's error). Twice the multiply-adds of project(), but the weight
  // bytes are read from memory once: each group of rows meets both planes while it is in
  // L1. The output projection, whose rounding moves every logit, runs this way
  // (tests/reference/score.py measures what it buys). For weights that take no 8-bit codes,
  // or with quantized activations off, it is project().
  void project_two_planes(ThreadPool& pool, const WeightView& w, std::span<float> y,
                          std::span<const std::uint8_t> sgemm = {},
                          const InterleavedMatrix* grouped = nullptr);

  // Bytes of the encoding buffers (part of the backend's workspace).
  std::uint64_t scratch_bytes() const;

 private:
  EncodedRows encoded(ThreadPool& pool, ActivationKind kind);
  void project_planes(ThreadPool& pool, const WeightView& w, std::span<float> y,
                      std::span<const std::uint8_t> sgemm, const InterleavedMatrix* grouped,
                      bool two_planes);
  EncodedRows second_plane(ThreadPool& pool);
  // x2.data == nullptr: one plane
  void project_grouped(ThreadPool& pool, const InterleavedMatrix& w, std::span<float> y,
                       EncodedRows x, EncodedRows x2);

  bool quantized_;
  CpuIsa isa_;
  std::span<const float> x_;
  std::int64_t cols_ = 0;
  std::int64_t n_tokens_ = 0;
  bool have_q8_ = false, have_f16_ = false, have_bf16_ = false;
  std::vector<Q8Block> q8_;          // [n_tokens][cols / 32]
  std::vector<std::uint16_t> f16_;   // [n_tokens][cols]
  std::vector<std::uint16_t> bf16_;  // [n_tokens][cols]
  std::vector<Q8Block> q8_second_;   // [n_tokens][cols / 32] codes of x - d1 q1
};

}  // namespace kvscope
