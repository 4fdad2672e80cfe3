// Weights in 8-row groups (cpu/quant_dot/interleaved.h): the SIMD group kernels give the
// portable kernel's bits, the results are the row-at-a-time kernels' up to float rounding,
// and Matmul uses them for any row count, a last short group included.
#include "cpu/quant_dot/interleaved.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/matmul.h"
#include "cpu/quant_dot/q8_activations.h"
#include "cpu/thread_pool.h"
#include "engine/cpu/exact_inputs.h"
#include "engine/cpu/random_weights.h"
#include "util/error.h"

namespace kvscope {
namespace {

constexpr TensorType kTypes[] = {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
                                 TensorType::Q5_1, TensorType::Q8_0, TensorType::Q4_K,
                                 TensorType::Q6_K};

// Columns of `blocks` blocks of the type (Q4_K's are 256 values).
std::int64_t cols_of(TensorType type, std::int64_t blocks) {
  return blocks * tensor_type_info(type).block_elems;
}

using test::random_floats;
using Stored = test::StoredWeight;

Stored stored(TensorType type, std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  return test::stored_weight(type, rows, cols, seed);
}

std::vector<Q8Block> activations(std::int64_t n_tokens, std::int64_t cols, std::uint32_t seed) {
  const std::vector<float> x = random_floats(n_tokens * cols, seed, 1.0f);
  std::vector<Q8Block> q(static_cast<std::size_t>(n_tokens * cols / 32));
  quantize_row_q8(x, q);
  return q;
}

std::string name(TensorType t) {
  return std::string(tensor_type_name(t));
}

TEST(Interleaved, SimdGroupKernelsGiveThePortableBits) {
  for (TensorType type : kTypes) {
    const std::int64_t cols = cols_of(type, cols_of(type, 1) == 256 ? 3 : 19);  // odd counts
    const Stored w = stored(type, 8, cols, 1);
    const InterleavedMatrix m(w.view);
    const std::vector<Q8Block> x = activations(kMaxTileTokens, cols, 2);
    for (CpuIsa isa : {CpuIsa::Avx2, CpuIsa::Avx512Vnni}) {
      if (!cpu_supports(isa)) continue;
      for (int nt = 1; nt <= kMaxTileTokens; ++nt) {
        std::vector<float> want(nt * 8), got(nt * 8);
        interleaved_dot_fn(type, CpuIsa::Portable)(m.group(0), cols / 32, {x.data(), cols / 32}, nt,
                                                   want.data(), 8);
        interleaved_dot_fn(type, isa)(m.group(0), cols / 32, {x.data(), cols / 32}, nt, got.data(),
                                      8);
        EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
            << name(type) << " " << cpu_isa_name(isa) << " tokens " << nt;
      }
    }
  }
}

// AVX without FMA (quant_dot.h): the portable bits where every float step is exact, the
// portable results up to rounding elsewhere.
TEST(Interleaved, AvxGroupKernelsGiveThePortableBitsWhereEveryFloatStepIsExact) {
  if (!cpu_supports(CpuIsa::Avx)) GTEST_SKIP() << "this CPU does not have AVX";
  for (TensorType type : kTypes) {
    const std::int64_t cols = cols_of(type, 1) == 256 ? 256 : 96;
    Stored w = stored(type, 8, cols, 71);
    test::make_scales_exact(type, w.bytes);
    const InterleavedMatrix m(w.view);
    const std::vector<Q8Block> x = test::exact_q8(kMaxTileTokens * cols / 32, 72);
    for (int nt = 1; nt <= kMaxTileTokens; ++nt) {
      std::vector<float> want(nt * 8), got(nt * 8);
      interleaved_dot_fn(type, CpuIsa::Portable)(m.group(0), cols / 32, {x.data(), cols / 32}, nt,
                                                 want.data(), 8);
      interleaved_dot_fn(type, CpuIsa::Avx)(m.group(0), cols / 32, {x.data(), cols / 32}, nt,
                                            got.data(), 8);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
          << name(type) << " tokens " << nt << ": " << got[0] << " vs " << want[0];
    }
  }
}

TEST(Interleaved, AvxGroupKernelsGiveThePortableResultsUpToRounding) {
  if (!cpu_supports(CpuIsa::Avx)) GTEST_SKIP() << "this CPU does not have AVX";
  for (TensorType type : kTypes) {
    const std::int64_t cols = cols_of(type, cols_of(type, 1) == 256 ? 3 : 19);
    const Stored w = stored(type, 8, cols, 73);
    const InterleavedMatrix m(w.view);
    const std::vector<Q8Block> x = activations(kMaxTileTokens, cols, 74);
    std::vector<float> want(kMaxTileTokens * 8), got(kMaxTileTokens * 8);
    interleaved_dot_fn(type, CpuIsa::Portable)(m.group(0), cols / 32, {x.data(), cols / 32},
                                               kMaxTileTokens, want.data(), 8);
    interleaved_dot_fn(type, CpuIsa::Avx)(m.group(0), cols / 32, {x.data(), cols / 32},
                                          kMaxTileTokens, got.data(), 8);
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-5f * (std::abs(want[i]) + 1.0f)) << name(type) << " " << i;
    }
  }
}

TEST(Interleaved, GroupsGiveTheRowKernelsResultsUpToRounding) {
  const std::int64_t rows = 16;
  for (TensorType type : kTypes) {
    const std::int64_t cols = cols_of(type, 1) == 256 ? 1536 : 576;  // SmolLM2's rows
    const Stored w = stored(type, rows, cols, 3);
    const InterleavedMatrix m(w.view);
    const std::vector<Q8Block> x = activations(1, cols, 4);
    std::vector<float> grouped(rows), by_row(rows);
    for (std::int64_t g = 0; g < 2; ++g) {
      interleaved_dot_fn(type, best_cpu_isa())(m.group(g), cols / 32, {x.data(), cols / 32}, 1,
                                               grouped.data() + 8 * g, rows);
    }
    tile_dot_fn(type, best_cpu_isa())(w.bytes.data(), row_bytes(type, cols), 4, cols,
                                      {x.data(), cols / 32}, 1, by_row.data(), rows);
    for (std::int64_t r = 4; r < rows; r += 4) {
      tile_dot_fn(type, best_cpu_isa())(w.bytes.data() + r * row_bytes(type, cols),
                                        row_bytes(type, cols), 4, cols, {x.data(), cols / 32}, 1,
                                        by_row.data() + r, rows);
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      EXPECT_NEAR(grouped[r], by_row[r], 1e-5f * (1.0f + std::abs(by_row[r])))
          << name(type) << " row " << r;
    }
  }
}

TEST(Interleaved, MatmulUsesGroupsForAnyRowCountIncludingAShortLastGroup) {
  const std::int64_t rows = 67, cols = 256, tokens = 6;
  for (TensorType type : kTypes) {
    const Stored w = stored(type, rows, cols, 5);
    const InterleavedMatrix m(w.view);
    EXPECT_EQ(m.n_groups(), 9);
    const std::vector<float> x = random_floats(tokens * cols, 6, 1.0f);
    ThreadPool pool(2);
    Matmul mm(true);
    mm.set_input(x, cols);
    std::vector<float> grouped(rows * tokens), by_row(rows * tokens);
    mm.project(pool, w.view, grouped, {}, &m);
    mm.project(pool, w.view, by_row);
    for (std::size_t i = 0; i < grouped.size(); ++i) {
      EXPECT_NEAR(grouped[i], by_row[i], 1e-5f * (1.0f + std::abs(by_row[i])))
          << name(type) << " token " << i / rows << " row " << i % rows;
    }
    // float activations take the float path whatever the layout
    Matmul exact(false);
    exact.set_input(x, cols);
    std::vector<float> a(rows * tokens), b(rows * tokens);
    exact.project(pool, w.view, a, {}, &m);
    exact.project(pool, w.view, b);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << name(type);
  }
}

TEST(Interleaved, LegacyTypesAndQ4_KHaveAGroupedLayout) {
  EXPECT_TRUE(can_interleave(TensorType::Q4_1));
  EXPECT_TRUE(can_interleave(TensorType::Q4_K));
  EXPECT_TRUE(can_interleave(TensorType::Q6_K));
  EXPECT_FALSE(can_interleave(TensorType::Q5_K));
  const Stored w = stored(TensorType::F16, 8, 64, 7);
  EXPECT_THROW(InterleavedMatrix{w.view}, UsageError);
  // Q4_K rows are whole super-blocks or nothing
  const Stored k = stored(TensorType::Q4_K, 8, 256, 8);
  WeightView odd = k.view;
  odd.cols = 288;
  EXPECT_THROW(InterleavedMatrix{odd}, UsageError);
}

}  // namespace
}  // namespace kvscope
