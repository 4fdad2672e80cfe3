// Google Benchmark timings of the CPU projections, so a regression shows up in numbers:
//   BM_TileDot  one kernel call (a tile of rows x tokens) per weight type and instruction set,
//               on rows of 576 and 4096 values that stay in cache: the kernel's own speed,
//               in multiply-adds/s
//   BM_Project  Matmul::project on SmolLM2's w_up shape (1536 x 576) for one token (decode,
//               weights from memory) and 128 tokens (a prompt), 2 threads; row by row, and
//               in 8-row groups where the type has them
// Run: build/bin/kvscope_cpu_benchmarks [--benchmark_filter=q4_1]
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cpu/matmul.h"
#include "cpu/quant_dot/interleaved.h"
#include "cpu/quant_dot/q8_activations.h"
#include "cpu/quant_dot/quant_dot.h"
#include "cpu/thread_pool.h"
#include "quant/tensor_type.h"
#include "util/half.h"

namespace kvscope {
namespace {

constexpr TensorType kTypes[] = {
    TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
    TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::F16,  TensorType::BF16};

std::vector<float> random_floats(std::int64_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<std::uint8_t> quantized(TensorType type, std::int64_t rows, std::int64_t cols) {
  const std::vector<float> w = random_floats(rows * cols, 1);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(rows * row_bytes(type, cols)));
  for (std::int64_t r = 0; r < rows; ++r) {
    quantize_row(type, &w[r * cols], &out[r * row_bytes(type, cols)], cols);
  }
  return out;
}

void BM_TileDot(benchmark::State& state, TensorType type, CpuIsa isa, int n_rows, int n_tokens,
                std::int64_t n) {
  if (!cpu_supports(isa)) {
    state.SkipWithError("this CPU does not have the instruction set");
    return;
  }
  const std::vector<std::uint8_t> rows = quantized(type, n_rows, n);
  const std::vector<float> x = random_floats(n_tokens * n, 2);
  std::vector<Q8Block> q8(static_cast<std::size_t>(n_tokens * n / 32));
  std::vector<std::uint16_t> half(x.size());
  EncodedRows enc{q8.data(), n / 32};
  if (activation_kind(type) == ActivationKind::Q8) {
    quantize_row_q8(x, q8);
  } else {
    for (std::size_t i = 0; i < x.size(); ++i) {
      half[i] = type == TensorType::BF16 ? float_to_bf16(x[i]) : float_to_fp16(x[i]);
    }
    enc = {half.data(), n};
  }
  const TileDotFn fn = tile_dot_fn(type, isa);
  std::vector<float> out(static_cast<std::size_t>(n_rows * n_tokens));
  for (auto _ : state) {
    fn(rows.data(), row_bytes(type, n), n_rows, n, enc, n_tokens, out.data(), n_rows);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(n * n_rows * n_tokens),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Project(benchmark::State& state, TensorType type, std::int64_t n_tokens, bool grouped) {
  const std::int64_t rows = 1536, cols = 576;
  const std::vector<std::uint8_t> data = quantized(type, rows, cols);
  const WeightView w{"bench.w_up", type, rows, cols, data.data()};
  std::unique_ptr<InterleavedMatrix> groups;
  if (grouped) groups = std::make_unique<InterleavedMatrix>(w);
  const std::vector<float> x = random_floats(n_tokens * cols, 3);
  std::vector<float> y(static_cast<std::size_t>(n_tokens * rows));
  ThreadPool pool(2);
  Matmul mm(true);
  for (auto _ : state) {
    mm.set_input(x, cols);  // encodes again on first use, as every step does
    mm.project(pool, w, y, {}, groups.get());
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(n_tokens),
                                                  benchmark::Counter::kIsIterationInvariantRate);
  state.counters["weight B/s"] = benchmark::Counter(static_cast<double>(data.size()),
                                                    benchmark::Counter::kIsIterationInvariantRate);
}

int register_all() {
  for (TensorType type : kTypes) {
    const std::string t(tensor_type_name(type));
    for (CpuIsa isa : {CpuIsa::Portable, CpuIsa::Avx, CpuIsa::Avx2, CpuIsa::Avx512Vnni}) {
      const std::string i(cpu_isa_name(isa));
      for (std::int64_t n : {576, 4096}) {                          // SmolLM2's rows, a 7B model's
        if (n % tensor_type_info(type).block_elems != 0) continue;  // K-quants: 256-value blocks
        const std::string name = "TileDot/" + t + "/" + i + "/n" + std::to_string(n);
        benchmark::RegisterBenchmark((name + "/1x1").c_str(), BM_TileDot, type, isa, 1, 1, n);
        benchmark::RegisterBenchmark((name + "/1x4").c_str(), BM_TileDot, type, isa, 1, 4, n);
      }
    }
    for (const bool grouped : {false, true}) {
      if (576 % tensor_type_info(type).block_elems != 0) break;  // BM_Project's rows are 576
      if (grouped && !can_interleave(type)) continue;
      const std::string p = "Project/" + t + (grouped ? "/8-row groups" : "");
      benchmark::RegisterBenchmark((p + "/decode").c_str(), BM_Project, type, 1, grouped);
      benchmark::RegisterBenchmark((p + "/prompt128").c_str(), BM_Project, type, 128, grouped);
    }
  }
  return 0;
}

const int registered = register_all();

}  // namespace
}  // namespace kvscope

BENCHMARK_MAIN();
