// F32, F16 and BF16 rows: conversion and the dot product the CPU matmul runs per row.
// The loops keep 16 independent partial sums so GCC/Clang vectorise them at -O2 without
// -ffast-math (a single accumulator would force a sequential, unvectorised reduction).
#include <cstring>

#include "quant/quant_blocks.h"

namespace kvscope::quants {

namespace {

constexpr int kLanes = 16;
// F16/BF16 rows are widened to floats this many at a time on the stack, then dotted.
constexpr int kChunk = 256;

// Pairwise sum of the lane accumulators (fixed order: the result is deterministic).
float reduce_lanes(const float* acc) {
  float s[kLanes / 2];
  for (int k = 0; k < kLanes / 2; ++k) s[k] = acc[k] + acc[k + kLanes / 2];
  for (int k = 0; k < kLanes / 4; ++k) s[k] += s[k + kLanes / 4];
  return ((s[0] + s[2]) + (s[1] + s[3]));
}

// Widens one chunk of `count` <= kChunk 16-bit values to dst[0..kChunk). The conversion
// loop always runs kChunk times (zero padding past count): a fixed trip count is what
// lets -O2 vectorise it.
template <float (*widen)(std::uint16_t)>
void widen_chunk(const std::uint8_t* src, int count, float* dst) {
  std::uint16_t h[kChunk];
  std::memcpy(h, src, 2 * static_cast<std::size_t>(count));
  if (count < kChunk) std::memset(h + count, 0, 2 * static_cast<std::size_t>(kChunk - count));
  for (int i = 0; i < kChunk; ++i) dst[i] = widen(h[i]);
}

float bf16_bits_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

int chunk_count(std::int64_t n, std::int64_t i) {
  return static_cast<int>(n - i < kChunk ? n - i : kChunk);
}

template <float (*widen)(std::uint16_t)>
void dequantize_half_row(const void* src, float* dst, std::int64_t n) {
  const auto* s = static_cast<const std::uint8_t*>(src);
  float buf[kChunk];
  for (std::int64_t i = 0; i < n; i += kChunk) {
    const int count = chunk_count(n, i);
    widen_chunk<widen>(s + 2 * i, count, buf);
    std::memcpy(dst + i, buf, sizeof(float) * static_cast<std::size_t>(count));
  }
}

// Dot of a 16-bit row with x, widening kChunk values at a time into a stack buffer.
template <float (*widen)(std::uint16_t)>
float dot_half_row(const void* row, const float* x, std::int64_t n) {
  const auto* src = static_cast<const std::uint8_t*>(row);
  float buf[kChunk];
  float total = 0.0f;
  for (std::int64_t i = 0; i < n; i += kChunk) {
    const int count = chunk_count(n, i);
    widen_chunk<widen>(src + 2 * i, count, buf);
    total += dot_f32_f32(buf, x + i, count);
  }
  return total;
}

void store_u16(std::uint8_t* dst, std::uint16_t v) {
  dst[0] = static_cast<std::uint8_t>(v & 0xffu);
  dst[1] = static_cast<std::uint8_t>(v >> 8);
}

}  // namespace

float dot_f32_f32(const float* a, const float* b, std::int64_t n) {
  float acc[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    // Fully unrolled, the lanes become four SSE (two AVX) registers instead of a stack array.
#pragma GCC unroll 16
    for (int k = 0; k < kLanes; ++k) acc[k] += a[i + k] * b[i + k];
  }
  for (int k = 0; i < n; ++i, ++k) acc[k] += a[i] * b[i];
  return reduce_lanes(acc);
}

void dequantize_f32(const void* src, float* dst, std::int64_t n) {
  std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
}

void quantize_f32(const float* x, void* dst, std::int64_t n) {
  std::memcpy(dst, x, static_cast<std::size_t>(n) * sizeof(float));
}

float dot_f32(const void* row, const float* x, std::int64_t n) {
  // F32 tensors in GGUF are 32-byte aligned and rows are multiples of 4 bytes.
  return dot_f32_f32(static_cast<const float*>(row), x, n);
}

void dequantize_f16(const void* src, float* dst, std::int64_t n) {
  dequantize_half_row<fp16_to_float_branchless>(src, dst, n);
}

void quantize_f16(const float* x, void* dst, std::int64_t n) {
  auto* d = static_cast<std::uint8_t*>(dst);
  for (std::int64_t i = 0; i < n; ++i) store_u16(d + 2 * i, float_to_fp16(x[i]));
}

float dot_f16(const void* row, const float* x, std::int64_t n) {
  return dot_half_row<fp16_to_float_branchless>(row, x, n);
}

void dequantize_bf16(const void* src, float* dst, std::int64_t n) {
  dequantize_half_row<bf16_bits_to_float>(src, dst, n);
}

void quantize_bf16(const float* x, void* dst, std::int64_t n) {
  auto* d = static_cast<std::uint8_t*>(dst);
  for (std::int64_t i = 0; i < n; ++i) store_u16(d + 2 * i, float_to_bf16(x[i]));
}

float dot_bf16(const void* row, const float* x, std::int64_t n) {
  return dot_half_row<bf16_bits_to_float>(row, x, n);
}

}  // namespace kvscope::quants
