// Dot products of stored weight rows with encoded activations, as llama.cpp's CPU backend
// computes them: quantized weights (Q4_0 .. Q8_0, Q4_K, Q5_K, Q6_K) against 8-bit activation
// codes (q8_activations.h) in integer multiply-adds, F16 and BF16 weights against activations
// rounded to the same type. A call multiplies up to kMaxTileRows weight rows, one after the
// other, with up to kMaxTileTokens activation rows: each decoded weight block serves every
// token of the tile (what makes a prompt cheaper per token than decoding). Several rows
// per instruction need the 8-row groups of interleaved.h: rows read in place interleaved
// defeat the hardware prefetcher.
//
// Each instruction set has its own table of these kernels (portable C++, AVX, AVX2, AVX-512
// VNNI). They give the same bits: the integer sums are exact, and every float operation
// (per-lane multiply-adds over 8 lanes, then one fixed reduction order) is the same in all of
// them and for every tile shape, so the SIMD tables are tested bit for bit against the
// portable one. The exception is AVX without AVX2: those CPUs have no FMA, so each fused
// multiply-add is a multiply and an add there (two roundings); its integer sums are the same,
// which tests check bit for bit on inputs whose float steps are exact.
#pragma once

#include <cstdint>
#include <string_view>

#include "cpu/quant_dot/q8_activations.h"
#include "quant/tensor_type.h"

namespace kvscope {

inline constexpr int kMaxTileRows = 4;
inline constexpr int kMaxTileTokens = 4;

// What a weight type's rows are multiplied with.
enum class ActivationKind {
  F32,   // the float activations themselves (F32 weights: llama.cpp's exact order)
  F16,   // fp16-rounded activations (F16 weights, as ggml's vec_dot_f16)
  BF16,  // bf16-rounded activations (BF16 weights)
  Q8,    // 8-bit codes per 32 values (every quantized type)
};
ActivationKind activation_kind(TensorType type);

// The activation rows a kernel reads: row t starts at `data` + t * `stride` elements of the
// kind's element type (Q8Block for Q8, std::uint16_t for F16/BF16).
struct EncodedRows {
  const void* data = nullptr;
  std::int64_t stride = 0;
};

// out[t * out_stride + r] = row r · x[t] for r < n_rows (1 .. kMaxTileRows), t < n_tokens
// (1 .. kMaxTileTokens). Row r starts at rows + r * row_stride bytes; n = row length in
// values, a multiple of the type's block size (and of 32 for Q8 activations).
using TileDotFn = void (*)(const void* rows, std::int64_t row_stride, int n_rows, std::int64_t n,
                           EncodedRows x, int n_tokens, float* out, std::int64_t out_stride);

// out[t * out_stride + r] = row r of one interleaved group (interleaved.h) · x[t], for
// r < 8 and t < n_tokens (1 .. kMaxTileTokens); n_blocks = cols / 32.
using InterleavedDotFn = void (*)(const std::uint8_t* group, std::int64_t n_blocks, EncodedRows x,
                                  int n_tokens, float* out, std::int64_t out_stride);

enum class CpuIsa { Portable, Avx, Avx2, Avx512Vnni };
std::string_view cpu_isa_name(CpuIsa isa);

// Whether this CPU (and OS) can run `isa`'s kernels.
bool cpu_supports(CpuIsa isa);
// The fastest ISA this CPU supports, at most KVSCOPE_CPU_ISA (simd_dispatch.h); Portable
// inside a PortableArithmeticScope (tests).
CpuIsa best_cpu_isa();

// The kernel for weights of `type` on `isa` (which must be supported); nullptr for types
// whose activations are F32 or that have no integer kernel.
TileDotFn tile_dot_fn(TensorType type, CpuIsa isa);

namespace quant_dot_detail {
// Per-ISA tables of every kernel.
struct KernelTable {
  TileDotFn q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, q6_K, f16, bf16;
  InterleavedDotFn interleaved_q4_0, interleaved_q4_1, interleaved_q5_0, interleaved_q5_1,
      interleaved_q8_0, interleaved_q4_K, interleaved_q6_K;
};
const KernelTable& portable_kernels();
const KernelTable* avx_kernels();         // nullptr when not compiled in (non-x86 builds)
const KernelTable* avx2_kernels();        // likewise
const KernelTable* avx512vnni_kernels();  // likewise
// The table of `isa` (nullptr when not compiled in).
const KernelTable* kernel_table(CpuIsa isa);
}  // namespace quant_dot_detail

}  // namespace kvscope
