// Embedding, RMSNorm, SwiGLU, GeGLU, residual/bias adds, scaling, soft-capping, RoPE, Hadamard
// and argmax kernels against the CPU reference functions (cpu_ops.h, ggml_compat.h, rope.h,
// kv_rotation.h) on random data of odd sizes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/kernel_launchers.h"
#include "cpu/cpu_ops.h"
#include "cpu/ggml_compat.h"
#include "cpu/rope.h"
#include "kernel_test_support.h"
#include "kv/format/kv_rotation.h"
#include "run/greedy.h"
#include "util/error.h"

namespace kvscope {
namespace {

using test::device_zeros;
using test::expect_close;
using test::from_device;
using test::random_floats;
using test::to_device;

TEST(CudaRmsnorm, MatchesTheCpuReferenceForOddRowLengthsAndGatheredRows) {
  KVSCOPE_REQUIRE_CUDA();
  for (const int n : {1, 7, 64, 255, 1000, 4099}) {
    const int n_rows = 5;
    const auto x = random_floats(static_cast<std::size_t>(n_rows * n), 1u + n, 3.0f);
    const auto w = random_floats(static_cast<std::size_t>(n), 2u + n);
    std::vector<float> ref(x.size());
    rmsnorm(x, w, 1e-5f, ref);
    auto dx = to_device(x), dw = to_device(w);
    auto dout = device_zeros<float>(x.size());
    cuda::launch_rmsnorm(dx.as<float>(), nullptr, dw.as<float>(), n_rows, n, 1e-5f,
                         dout.as<float>(), nullptr);
    expect_close(from_device<float>(dout, x.size()), ref, 1e-5f, 1e-4f,
                 "rmsnorm n=" + std::to_string(n));
    // gathered rows 4, 1: the rows that need logits
    const std::vector<int> rows = {4, 1};
    auto drows = to_device(rows);
    auto dg = device_zeros<float>(2 * static_cast<std::size_t>(n));
    cuda::launch_rmsnorm(dx.as<float>(), drows.as<int>(), dw.as<float>(), 2, n, 1e-5f,
                         dg.as<float>(), nullptr);
    std::vector<float> want(ref.begin() + 4 * n, ref.begin() + 5 * n);
    want.insert(want.end(), ref.begin() + n, ref.begin() + 2 * n);
    expect_close(from_device<float>(dg, want.size()), want, 1e-5f, 1e-4f, "gathered rmsnorm");
  }
}

// The codes a kernel writes beside its output: launch_quantize_q8 of that output, bit for bit.
void expect_codes_of(const cuda::DeviceBuffer& out, const cuda::DeviceBuffer& q,
                     const cuda::DeviceBuffer& d, std::size_t n, const std::string& what) {
  auto want_q = device_zeros<std::int8_t>(n);
  auto want_d = device_zeros<float>(n / 32);
  cuda::launch_quantize_q8(out.as<float>(), static_cast<std::int64_t>(n), want_q.as<std::int8_t>(),
                           want_d.as<float>(), nullptr);
  EXPECT_EQ(from_device<std::int8_t>(q, n), from_device<std::int8_t>(want_q, n)) << what;
  EXPECT_EQ(from_device<float>(d, n / 32), from_device<float>(want_d, n / 32)) << what;
}

TEST(CudaQ8Codes, RmsnormAndSwigluWriteTheCodesOfTheirOutput) {
  KVSCOPE_REQUIRE_CUDA();
  for (const int n : {32, 288, 4096}) {
    const int n_rows = 3;
    const auto size = static_cast<std::size_t>(n_rows * n);
    const auto x = random_floats(size, 21u + n, 3.0f);
    const auto w = random_floats(static_cast<std::size_t>(n), 22u + n);
    auto dx = to_device(x), dw = to_device(w);
    auto plain = device_zeros<float>(size), out = device_zeros<float>(size);
    auto dq = device_zeros<std::int8_t>(size);
    auto dd = device_zeros<float>(size / 32);
    const cuda::Q8Codes codes{dq.as<std::int8_t>(), dd.as<float>()};
    cuda::launch_rmsnorm(dx.as<float>(), nullptr, dw.as<float>(), n_rows, n, 1e-5f,
                         plain.as<float>(), nullptr);
    cuda::launch_rmsnorm(dx.as<float>(), nullptr, dw.as<float>(), n_rows, n, 1e-5f, out.as<float>(),
                         nullptr, codes);
    EXPECT_EQ(from_device<float>(out, size), from_device<float>(plain, size)) << n;
    expect_codes_of(out, dq, dd, size, "rmsnorm n=" + std::to_string(n));

    const auto up = random_floats(size, 23u + n, 2.0f);
    auto du = to_device(up);
    cuda::launch_swiglu(dx.as<float>(), du.as<float>(), plain.as<float>(),
                        static_cast<std::int64_t>(size), nullptr);
    cuda::launch_swiglu(dx.as<float>(), du.as<float>(), out.as<float>(),
                        static_cast<std::int64_t>(size), nullptr, codes);
    EXPECT_EQ(from_device<float>(out, size), from_device<float>(plain, size)) << n;
    expect_codes_of(out, dq, dd, size, "swiglu n=" + std::to_string(size));
  }
}

TEST(CudaQ8Codes, KernelsRefuseCodesForPartialBlocks) {
  const cuda::Q8Codes codes{reinterpret_cast<std::int8_t*>(std::uintptr_t{1} << 20),
                            reinterpret_cast<float*>(std::uintptr_t{2} << 20)};
  EXPECT_THROW(
      cuda::launch_rmsnorm(nullptr, nullptr, nullptr, 1, 33, 1e-5f, nullptr, nullptr, codes),
      UsageError);
  EXPECT_THROW(cuda::launch_swiglu(nullptr, nullptr, nullptr, 48, nullptr, codes), UsageError);
}

TEST(CudaElementwise, SwigluAddAndBiasMatchTheCpuReference) {
  KVSCOPE_REQUIRE_CUDA();
  const int n_rows = 3, n = 333;
  const auto size = static_cast<std::size_t>(n_rows * n);
  const auto gate = random_floats(size, 11, 8.0f), up = random_floats(size, 12, 2.0f);
  const auto bias = random_floats(static_cast<std::size_t>(n), 13);
  std::vector<float> ref(size);
  swiglu(gate, up, ref);
  auto dg = to_device(gate), du = to_device(up);
  cuda::launch_swiglu(dg.as<float>(), du.as<float>(), dg.as<float>(),
                      static_cast<std::int64_t>(size), nullptr);
  expect_close(from_device<float>(dg, size), ref, 1e-6f, 1e-5f, "swiglu");

  std::vector<float> x = up;
  add_in_place(x, gate);
  add_bias(x, bias);
  auto dx = to_device(up), dy = to_device(gate), db = to_device(bias);
  cuda::launch_add_in_place(dx.as<float>(), dy.as<float>(), static_cast<std::int64_t>(size),
                            nullptr);
  cuda::launch_add_bias(dx.as<float>(), db.as<float>(), n_rows, n, nullptr);
  expect_close(from_device<float>(dx, size), x, 0.0f, 0.0f, "add + bias");
}

// Gemma's gate, scaled embeddings and Gemma 2's capped logits; Qwen 3 / Gemma 3 normalise q
// and k per head, which is launch_rmsnorm over rows of head_dim in place.
TEST(CudaElementwise, GegluScaleSoftCapAndPerHeadNormMatchTheCpuReference) {
  KVSCOPE_REQUIRE_CUDA();
  const int n_rows = 3, n = 2048;  // Gemma 3 270M's FFN width
  const auto size = static_cast<std::size_t>(n_rows * n);
  const auto gate = random_floats(size, 31, 6.0f), up = random_floats(size, 32, 2.0f);
  std::vector<float> ref(size);
  for (int r = 0; r < n_rows; ++r) geglu_row(&gate[r * n], &up[r * n], &ref[r * n], n);
  auto dg = to_device(gate), du = to_device(up);
  auto dq = device_zeros<std::int8_t>(size);
  auto dd = device_zeros<float>(size / 32);
  // expf against ggml's polynomial exponential: a few ulp
  cuda::launch_geglu(dg.as<float>(), du.as<float>(), dg.as<float>(),
                     static_cast<std::int64_t>(size), nullptr,
                     {dq.as<std::int8_t>(), dd.as<float>()});
  expect_close(from_device<float>(dg, size), ref, 1e-6f, 1e-5f, "geglu");
  expect_codes_of(dg, dq, dd, size, "geglu codes");
  EXPECT_THROW(cuda::launch_geglu(nullptr, nullptr, nullptr, 48, nullptr,
                                  {dq.as<std::int8_t>(), dd.as<float>()}),
               UsageError);

  const float scale = std::sqrt(640.0f);  // Gemma 3 270M's embedding scale
  std::vector<float> scaled = up;
  for (float& v : scaled) v *= scale;
  auto dx = to_device(up);
  cuda::launch_scale(dx.as<float>(), scale, static_cast<std::int64_t>(size), nullptr);
  expect_close(from_device<float>(dx, size), scaled, 0.0f, 0.0f, "scale");

  std::vector<float> capped = gate;
  for (float& v : capped) v *= 20.0f;  // past the cap, where tanh bends
  auto dc = to_device(capped);
  soft_cap(capped, 30.0f);
  cuda::launch_soft_cap(dc.as<float>(), 30.0f, static_cast<std::int64_t>(size), nullptr);
  expect_close(from_device<float>(dc, size), capped, 1e-6f, 1e-5f, "soft cap");
  EXPECT_THROW(cuda::launch_soft_cap(dc.as<float>(), 0.0f, 1, nullptr), UsageError);

  // q [2 tokens][4 heads][256]: one weight of head_dim for every head
  const int hd = 256, rows = 2 * 4;
  const auto q = random_floats(static_cast<std::size_t>(rows * hd), 33, 4.0f);
  const auto w = random_floats(static_cast<std::size_t>(hd), 34);
  std::vector<float> want(q.size());
  for (int r = 0; r < rows; ++r) {
    rmsnorm(std::span<const float>(&q[r * hd], hd), w, 1e-6f, std::span<float>(&want[r * hd], hd));
  }
  auto dhq = to_device(q), dw = to_device(w);
  cuda::launch_rmsnorm(dhq.as<float>(), nullptr, dw.as<float>(), rows, hd, 1e-6f, dhq.as<float>(),
                       nullptr);
  expect_close(from_device<float>(dhq, q.size()), want, 1e-5f, 1e-4f, "per-head rmsnorm");
}

TEST(CudaEmbedding, CopiesTheRowsOfEachTokenForEveryWeightType) {
  KVSCOPE_REQUIRE_CUDA();
  const int vocab = 37, dim = 96;
  const auto table = random_floats(static_cast<std::size_t>(vocab * dim), 21);
  const std::vector<int> tokens = {5, 0, 36, 5, 17};
  for (const auto& [type, dtype] : {std::pair{TensorType::F32, cuda::DeviceWeightType::F32},
                                    std::pair{TensorType::F16, cuda::DeviceWeightType::F16},
                                    std::pair{TensorType::Q8_0, cuda::DeviceWeightType::Q8_0},
                                    std::pair{TensorType::Q4_0, cuda::DeviceWeightType::Q4_0}}) {
    const std::int64_t rb = row_bytes(type, dim);
    std::vector<std::uint8_t> stored(static_cast<std::size_t>(rb * vocab));
    for (int r = 0; r < vocab; ++r) quantize_row(type, &table[r * dim], &stored[r * rb], dim);
    std::vector<float> ref;
    for (const int t : tokens) {
      std::vector<float> row(dim);
      dequantize_row(type, &stored[t * rb], row.data(), dim);
      ref.insert(ref.end(), row.begin(), row.end());
    }
    auto dstored = to_device(stored), dtok = to_device(tokens);
    auto dx = device_zeros<float>(ref.size());
    const cuda::DeviceWeight w{dtype, vocab, dim, rb, dstored.get()};
    cuda::launch_embedding(w, dtok.as<int>(), static_cast<int>(tokens.size()), dx.as<float>(),
                           nullptr);
    expect_close(from_device<float>(dx, ref.size()), ref, 0.0f, 0.0f,
                 std::string("embedding ") + std::string(tensor_type_name(type)));
  }
}

TEST(CudaRope, RotatesLikeTheCpuRopeForBothPairingsAndPartialRotation) {
  KVSCOPE_REQUIRE_CUDA();
  for (const RopePairing pairing : {RopePairing::Adjacent, RopePairing::HalfSplit}) {
    for (const auto& [head_dim, rope_dim] : {std::pair{8, 8}, std::pair{64, 64}, std::pair{80, 32},
                                             std::pair{128, 128}, std::pair{256, 256}}) {
      RopeConfig c;
      c.head_dim = head_dim;
      c.rope_dim = rope_dim;
      c.theta = 500000.0;
      c.pairing = pairing;
      const Rope rope(c);
      const int n_heads = 6, n_kv = 2, positions = 300;
      const std::vector<int> pos = {0, 1, 17, 299, 150};
      const int T = static_cast<int>(pos.size());
      auto q = random_floats(static_cast<std::size_t>(T * n_heads * head_dim), 31);
      auto k = random_floats(static_cast<std::size_t>(T * n_kv * head_dim), 32);
      const int half = rope_dim / 2;
      std::vector<float> cs(static_cast<std::size_t>(positions * half)), sn(cs.size());
      for (int p = 0; p < positions; ++p) {
        rope.angles(p, {&cs[p * half], static_cast<std::size_t>(half)},
                    {&sn[p * half], static_cast<std::size_t>(half)});
      }
      auto dq = to_device(q), dk = to_device(k), dpos = to_device(pos);
      auto dcos = to_device(cs), dsin = to_device(sn);
      cuda::RopeArgs a{T,
                       n_heads,
                       n_kv,
                       head_dim,
                       rope_dim,
                       pairing == RopePairing::Adjacent,
                       dpos.as<int>(),
                       dcos.as<float>(),
                       dsin.as<float>()};
      cuda::launch_rope(a, dq.as<float>(), dk.as<float>(), nullptr);
      for (int t = 0; t < T; ++t) {
        rope.apply({&q[t * n_heads * head_dim], static_cast<std::size_t>(n_heads * head_dim)},
                   pos[t]);
        rope.apply({&k[t * n_kv * head_dim], static_cast<std::size_t>(n_kv * head_dim)}, pos[t]);
      }
      const std::string what = "rope head_dim " + std::to_string(head_dim);
      expect_close(from_device<float>(dq, q.size()), q, 1e-6f, 1e-5f, what + " q");
      expect_close(from_device<float>(dk, k.size()), k, 1e-6f, 1e-5f, what + " k");
    }
  }
}

// The Hadamard basis of int4 KV rows: the device's butterflies are the CPU's, bit for bit,
// for power-of-two head_dims and block-diagonal ones (80 = 64 + 16, 40 = 32 + 8, 7 = 4+2+1).
TEST(CudaHadamard, TurnsRowsToTheCpuBitsForEveryHeadDim) {
  KVSCOPE_REQUIRE_CUDA();
  for (const int head_dim : {1, 7, 8, 40, 64, 80, 96, 128, 256}) {
    const int n_rows = 37;
    auto x = random_floats(static_cast<std::size_t>(n_rows * head_dim), 5u + head_dim, 4.0f);
    auto dx = to_device(x);
    cuda::launch_hadamard_rows(dx.as<float>(), n_rows, head_dim, nullptr);
    kv_rotate_rows(x.data(), n_rows, head_dim);
    EXPECT_EQ(from_device<float>(dx, x.size()), x) << "head_dim " << head_dim;
  }
}

TEST(CudaArgmax, PicksTheLargestAndTheLowestIndexAmongEquals) {
  KVSCOPE_REQUIRE_CUDA();
  const int n = 32001;
  std::vector<float> x = random_floats(static_cast<std::size_t>(3 * n), 41);
  x[n + 7] = 5.0f;  // row 1: a tie between 7 and 31000, the lower wins
  x[n + 31000] = 5.0f;
  x[2 * n + n - 1] = 9.0f;  // row 2: the last element
  auto dx = to_device(x);
  auto dout = device_zeros<int>(3);
  cuda::launch_argmax(dx.as<float>(), 3, n, dout.as<int>(), nullptr);
  const auto got = from_device<int>(dout, 3);
  const auto row0 = std::max_element(x.begin(), x.begin() + n) - x.begin();
  EXPECT_EQ(got[0], row0);
  EXPECT_EQ(got[1], 7);
  EXPECT_EQ(got[2], n - 1);
}

// The rows greedy_pick refuses, the device refuses with the same codes.
TEST(CudaArgmax, RowsWithoutAPickGetGreedyPicksCodes) {
  KVSCOPE_REQUIRE_CUDA();
  const int n = 3000;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> x = random_floats(static_cast<std::size_t>(5 * n), 43);
  x[2999] = std::numeric_limits<float>::quiet_NaN();       // row 0: NaN at the end
  x[n + 17] = kInf;                                        // row 1: +inf
  std::fill(x.begin() + 2 * n, x.begin() + 3 * n, -kInf);  // row 2: all masked
  std::fill(x.begin() + 3 * n, x.begin() + 4 * n, -kInf);  // row 3: one unmasked value
  x[3 * n + 2500] = -1e30f;
  auto dx = to_device(x);
  auto dout = device_zeros<int>(5);
  cuda::launch_argmax(dx.as<float>(), 5, n, dout.as<int>(), nullptr);
  const auto got = from_device<int>(dout, 5);
  for (int r = 0; r < 5; ++r) {
    const auto row = std::span<const float>(x).subspan(static_cast<std::size_t>(r * n),
                                                       static_cast<std::size_t>(n));
    EXPECT_EQ(got[static_cast<std::size_t>(r)], greedy_pick(row)) << "row " << r;
  }
  EXPECT_EQ(got[0], cuda::kArgmaxInvalid);
  EXPECT_EQ(got[1], cuda::kArgmaxInvalid);
  EXPECT_EQ(got[2], cuda::kArgmaxAllMasked);
  EXPECT_EQ(got[3], 2500);
}

}  // namespace
}  // namespace kvscope
