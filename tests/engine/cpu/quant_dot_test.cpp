// The quantized dot products against their own specification: the SIMD tables give the
// portable kernels' bits, a tile of tokens gives each token's single-token bits, and the
// result is the float dot product of the stored row with the decoded activation codes.
#include "cpu/quant_dot/quant_dot.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/quant_dot/interleaved.h"
#include "cpu/quant_dot/q8_activations.h"
#include "cpu/simd_dispatch.h"
#include "engine/cpu/exact_inputs.h"
#include "engine/cpu/random_weights.h"
#include "quant/tensor_type.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {
namespace {

constexpr TensorType kTypes[] = {
    TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
    TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::F16,  TensorType::BF16};
constexpr CpuIsa kSimd[] = {CpuIsa::Avx2, CpuIsa::Avx512Vnni};

using test::random_floats;

// `rows` stored rows of `n` values of `type`, quantized from random floats.
std::vector<std::uint8_t> random_rows(TensorType type, std::int64_t rows, std::int64_t n,
                                      std::uint32_t seed) {
  return test::stored_weight(type, rows, n, seed).bytes;
}

// The activations of `n_tokens` rows encoded for `type`, kept alive with their view.
struct Activations {
  std::vector<float> x;
  std::vector<Q8Block> q8;
  std::vector<std::uint16_t> half;
  EncodedRows rows;
  // Value i of token t as the kernel sees it (decoded codes, or the rounded float).
  float decoded(std::int64_t t, std::int64_t i, std::int64_t n) const {
    if (!q8.empty()) {
      const Q8Block& b = q8[t * (n / 32) + i / 32];
      return b.d * b.q[i % 32];
    }
    return x[t * n + i];
  }
};

Activations encode(TensorType type, std::int64_t n_tokens, std::int64_t n, std::uint32_t seed) {
  Activations a;
  a.x = random_floats(n_tokens * n, seed);
  if (activation_kind(type) == ActivationKind::Q8) {
    a.q8.resize(static_cast<std::size_t>(n_tokens * n / 32));
    quantize_row_q8(a.x, a.q8);
    a.rows = {a.q8.data(), n / 32};
    return a;
  }
  const bool bf16 = type == TensorType::BF16;
  for (float& v : a.x) {
    const std::uint16_t h = bf16 ? float_to_bf16(v) : float_to_fp16(v);
    a.half.push_back(h);
    v = bf16 ? bf16_to_float(h) : fp16_to_float(h);
  }
  a.rows = {a.half.data(), n};
  return a;
}

// out[t][r] for r < n_rows, t < n_tokens: one tile call of `isa`'s kernel on rows stored one
// after the other.
std::vector<float> tile(TensorType type, CpuIsa isa, const void* rows, std::int64_t n,
                        const Activations& a, int n_tokens, int n_rows = 1) {
  std::vector<float> out(static_cast<std::size_t>(n_tokens * n_rows));
  tile_dot_fn(type, isa)(rows, row_bytes(type, n), n_rows, n, a.rows, n_tokens, out.data(), n_rows);
  return out;
}

std::string label(TensorType type) {
  return std::string(tensor_type_name(type));
}

TEST(QuantDot, EveryQuantizedTypeTakesEightBitCodesAndHalvesTakeTheirOwnType) {
  for (TensorType t : kTypes) {
    const ActivationKind want = t == TensorType::F16    ? ActivationKind::F16
                                : t == TensorType::BF16 ? ActivationKind::BF16
                                                        : ActivationKind::Q8;
    EXPECT_EQ(activation_kind(t), want) << label(t);
    EXPECT_NE(tile_dot_fn(t, CpuIsa::Portable), nullptr) << label(t);
  }
  EXPECT_EQ(activation_kind(TensorType::F32), ActivationKind::F32);
  EXPECT_EQ(tile_dot_fn(TensorType::F32, CpuIsa::Portable), nullptr);
}

TEST(QuantDot, TheResultIsTheFloatDotProductWithTheDecodedActivations) {
  const std::int64_t n = 512;
  for (TensorType type : kTypes) {
    const std::vector<std::uint8_t> row = random_rows(type, 1, n, 7);
    const Activations a = encode(type, 1, n, 8);
    std::vector<float> w(n), xhat(n);
    dequantize_row(type, row.data(), w.data(), n);
    double want = 0, magnitude = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      xhat[i] = a.decoded(0, i, n);
      want += static_cast<double>(w[i]) * xhat[i];
      magnitude += std::abs(static_cast<double>(w[i]) * xhat[i]);
    }
    const float got = tile(type, CpuIsa::Portable, row.data(), n, a, 1)[0];
    EXPECT_NEAR(got, want, 1e-5 * magnitude + 1e-7) << label(type);
  }
}

TEST(QuantDot, EightBitCodesStayWithinHalfACodeOfTheFloatActivations) {
  const std::int64_t n = 1024;
  for (TensorType type : kTypes) {
    if (activation_kind(type) != ActivationKind::Q8) continue;
    const std::vector<std::uint8_t> row = random_rows(type, 1, n, 17);
    const Activations a = encode(type, 1, n, 18);
    std::vector<float> w(n);
    dequantize_row(type, row.data(), w.data(), n);
    double exact = 0, bound = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      exact += static_cast<double>(w[i]) * a.x[i];
      // |x - d q| <= d / 2 (round to nearest), and the fp16 scale moves d q by <= 2^-11 |q| d
      const Q8Block& b = a.q8[i / 32];
      bound += std::abs(w[i]) * (b.d * 0.5 + std::abs(b.q[i % 32] * b.d) * 0x1p-10);
    }
    const float got = tile(type, CpuIsa::Portable, row.data(), n, a, 1)[0];
    EXPECT_NEAR(got, exact, bound + 1e-4) << label(type);
  }
}

TEST(QuantDot, SimdKernelsGiveThePortableBitsForEveryTypeAndTileShape) {
  for (CpuIsa isa : kSimd) {
    if (!cpu_supports(isa)) {
      std::printf("skipping %s: this CPU does not have it\n", cpu_isa_name(isa).data());
      continue;
    }
    for (TensorType type : kTypes) {
      // odd block counts and several super-blocks; F16/BF16 also a tail past the last 8
      for (std::int64_t n : {256, 768, 2816}) {
        const std::vector<std::uint8_t> rows = random_rows(type, kMaxTileRows, n, 23);
        const Activations a = encode(type, kMaxTileTokens, n, 24);
        for (int nr = 1; nr <= kMaxTileRows; ++nr) {
          for (int nt = 1; nt <= kMaxTileTokens; ++nt) {
            const auto want = tile(type, CpuIsa::Portable, rows.data(), n, a, nt, nr);
            const auto got = tile(type, isa, rows.data(), n, a, nt, nr);
            EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                << cpu_isa_name(isa) << " " << label(type) << " n=" << n << " tile " << nr << "x"
                << nt;
          }
        }
      }
    }
  }
}

TEST(QuantDot, ATileGivesEachRowAndTokenItsOwnBits) {
  const std::int64_t n = 768;
  for (TensorType type : kTypes) {
    const std::vector<std::uint8_t> rows = random_rows(type, kMaxTileRows, n, 31);
    const Activations a = encode(type, kMaxTileTokens, n, 32);
    for (const auto& [nr, nt] : {std::pair{kMaxTileRows, 1}, std::pair{kMaxTileRows, 4},
                                 std::pair{3, 3}, std::pair{1, kMaxTileTokens}}) {
      const auto all = tile(type, best_cpu_isa(), rows.data(), n, a, nt, nr);
      for (int r = 0; r < nr; ++r) {
        for (int t = 0; t < nt; ++t) {
          Activations one = a;
          one.rows.data = activation_kind(type) == ActivationKind::Q8
                              ? static_cast<const void*>(a.q8.data() + t * (n / 32))
                              : static_cast<const void*>(a.half.data() + t * n);
          const float single =
              tile(type, best_cpu_isa(), rows.data() + r * row_bytes(type, n), n, one, 1)[0];
          EXPECT_EQ(std::memcmp(&single, &all[t * nr + r], sizeof(float)), 0)
              << label(type) << " tile " << nr << "x" << nt << " row " << r << " token " << t;
        }
      }
    }
  }
}

// AVX without AVX2 has no FMA, so its kernels multiply and add in two roundings (quant_dot.h).
// On inputs where every float step is exact (exact_inputs.h) that makes no difference: the
// integer work is checked bit for bit against the portable kernels.
TEST(QuantDot, AvxKernelsGiveThePortableBitsWhereEveryFloatStepIsExact) {
  if (!cpu_supports(CpuIsa::Avx)) GTEST_SKIP() << "this CPU does not have AVX";
  for (TensorType type : kTypes) {
    for (std::int64_t n : {32, 96, 256}) {
      if (n % tensor_type_info(type).block_elems != 0) continue;
      std::vector<std::uint8_t> rows = random_rows(type, kMaxTileRows, n, 51);
      test::make_scales_exact(type, rows);
      Activations a;
      if (activation_kind(type) == ActivationKind::Q8) {
        a.q8 = test::exact_q8(kMaxTileTokens * n / 32, 52);
        a.rows = {a.q8.data(), n / 32};
      } else {
        a.half = test::exact_halves(kMaxTileTokens * n, type == TensorType::BF16, 53);
        a.rows = {a.half.data(), n};
      }
      for (int nr = 1; nr <= kMaxTileRows; ++nr) {
        for (int nt = 1; nt <= kMaxTileTokens; ++nt) {
          const auto want = tile(type, CpuIsa::Portable, rows.data(), n, a, nt, nr);
          const auto got = tile(type, CpuIsa::Avx, rows.data(), n, a, nt, nr);
          EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
              << label(type) << " n=" << n << " tile " << nr << "x" << nt << ": " << got[0]
              << " vs " << want[0];
        }
      }
    }
  }
}

// On any inputs they differ from the fused kernels by float rounding only.
TEST(QuantDot, AvxKernelsGiveThePortableResultsUpToRounding) {
  if (!cpu_supports(CpuIsa::Avx)) GTEST_SKIP() << "this CPU does not have AVX";
  for (TensorType type : kTypes) {
    for (std::int64_t n : {256, 2816}) {
      const std::vector<std::uint8_t> rows = random_rows(type, kMaxTileRows, n, 61);
      const Activations a = encode(type, kMaxTileTokens, n, 62);
      const auto want =
          tile(type, CpuIsa::Portable, rows.data(), n, a, kMaxTileTokens, kMaxTileRows);
      const auto got = tile(type, CpuIsa::Avx, rows.data(), n, a, kMaxTileTokens, kMaxTileRows);
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-5f * (std::abs(want[i]) + 1.0f))
            << label(type) << " n=" << n << " result " << i;
      }
    }
  }
}

// Each instruction set's table holds its own code: when the linker merged the kernel files'
// instantiations into one copy, every table pointed at the same functions and the bit-for-bit
// comparisons above compared a kernel with itself.
TEST(QuantDot, EachInstructionSetHasItsOwnKernels) {
  const CpuIsa all[] = {CpuIsa::Portable, CpuIsa::Avx, CpuIsa::Avx2, CpuIsa::Avx512Vnni};
  for (TensorType type : kTypes) {
    for (CpuIsa a : all) {
      for (CpuIsa b : all) {
        if (a == b || !quant_dot_detail::kernel_table(a) || !quant_dot_detail::kernel_table(b)) {
          continue;
        }
        EXPECT_NE(reinterpret_cast<const void*>(tile_dot_fn(type, a)),
                  reinterpret_cast<const void*>(tile_dot_fn(type, b)))
            << label(type) << ": " << cpu_isa_name(a) << " and " << cpu_isa_name(b);
      }
    }
  }
  for (TensorType type : {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q8_0}) {
    for (CpuIsa a : all) {
      for (CpuIsa b : all) {
        if (a == b || !quant_dot_detail::kernel_table(a) || !quant_dot_detail::kernel_table(b)) {
          continue;
        }
        EXPECT_NE(reinterpret_cast<const void*>(interleaved_dot_fn(type, a)),
                  reinterpret_cast<const void*>(interleaved_dot_fn(type, b)))
            << label(type) << " (8-row groups): " << cpu_isa_name(a) << " and " << cpu_isa_name(b);
      }
    }
  }
}

TEST(QuantDot, PortableScopeSelectsThePortableKernels) {
  PortableArithmeticScope portable;
  EXPECT_EQ(best_cpu_isa(), CpuIsa::Portable);
}

TEST(Q8Activations, CodesAreRoundedAgainstTheScaleAndSumsAreKept) {
  std::vector<float> x = random_floats(64, 41);
  x[5] = 3.0f;  // the block's max
  std::vector<Q8Block> q(2);
  quantize_row_q8(x, q);
  EXPECT_EQ(q[0].q[5], 127);
  EXPECT_FLOAT_EQ(q[0].d, fp16_to_float(float_to_fp16(3.0f / 127.0f)));
  for (const Q8Block& b : q) {
    int sum = 0, sum16 = 0;
    for (int i = 0; i < 32; ++i) {
      EXPECT_LE(std::abs(b.q[i]), 127);
      sum += b.q[i];
      if (i < 16) sum16 += b.q[i];
    }
    EXPECT_EQ(b.s, b.d * static_cast<float>(sum));
    EXPECT_EQ(b.sum, sum);
    EXPECT_EQ(b.sum16, sum16);
  }
  for (int i = 0; i < 32; ++i) {
    EXPECT_NEAR(q[1].q[i] * q[1].d, x[32 + i], q[1].d * 0.5f + 1e-3f * std::abs(x[32 + i]));
  }
}

TEST(Q8Activations, AllZeroBlocksHaveZeroScaleAndNonFiniteBlocksAScaleOfNaN) {
  std::vector<float> x(96, 0.0f);
  x[40] = std::numeric_limits<float>::infinity();
  x[70] = std::numeric_limits<float>::quiet_NaN();
  std::vector<Q8Block> q(3);
  quantize_row_q8(x, q);
  EXPECT_EQ(q[0].d, 0.0f);
  EXPECT_EQ(q[0].s, 0.0f);
  EXPECT_TRUE(std::isnan(q[1].d));
  EXPECT_TRUE(std::isnan(q[2].d));
}

TEST(Q8Activations, ARowThatIsNotWholeBlocksIsRefused) {
  std::vector<float> x(40, 1.0f);
  std::vector<Q8Block> q(1);
  EXPECT_THROW(quantize_row_q8(x, q), UsageError);
}

}  // namespace
}  // namespace kvscope
