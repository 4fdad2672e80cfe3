// The KV quantization-error sums launch_kv_append measures on the device, against the CPU's
// (KvCacheManager::write_token records kv_slot_quant_error): every dtype pair, odd head_dims,
// shuffled block tables, a step that crosses blocks. The per-element terms are the same
// doubles; only the order of the additions differs.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cuda_backend.h"
#include "backend/cuda_factory.h"
#include "backend/kernel_launchers.h"
#include "kv/kv_cache_observer.h"
#include "kv_test_fixture.h"
#include "run/engine.h"
#include "support/test_data.h"

namespace kvscope {
namespace {

using test::kTestSeq;
using test::KvCase;

void expect_sums_near(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-9 * std::fabs(want) + 1e-12) << what;
}

void check_error_sums(const KvCase& c) {
  KvCacheManager kv = test::make_shuffled_kv(c);
  const std::int64_t layer = c.n_layers - 1;
  const std::int64_t kv_dim = c.n_kv_heads * c.head_dim;
  const auto k = test::random_floats(static_cast<std::size_t>(c.length * kv_dim), 3, 4.0f);
  const auto v = test::random_floats(k.size(), 4, 2.0f);
  KvCacheObserver observer(kv.config());
  kv.set_observer(&observer);
  for (std::int64_t pos = 0; pos < c.length; ++pos) {
    kv.bytes().write_token(kTestSeq, layer, pos, &k[pos * kv_dim], &v[pos * kv_dim], true);
  }
  const KvBlockLayout& L = kv.layout(0);
  auto pool = test::device_zeros<std::uint8_t>(
      static_cast<std::size_t>(kv.pool(0).n_blocks() * L.block_bytes()));
  auto dk = test::to_device(k), dv = test::to_device(v);
  auto sums = test::device_zeros<cuda::KvErrorSums>(1);
  test::TestStep step;
  test::make_step(kv, 0, c.length, step);
  const cuda::KvLayerLayout layout = cuda::kv_layer_layout(L, layer);
  const cuda::KvStepTables tables = test::step_tables(step, pool.as<std::uint8_t>());
  cuda::launch_kv_append(layout, tables, dk.as<float>(), dv.as<float>(), c.length, nullptr,
                         sums.as<cuda::KvErrorSums>());
  const cuda::KvErrorSums got = test::from_device<cuda::KvErrorSums>(sums, 1)[0];

  const std::string what = std::string(kv_dtype_name(c.k_dtype)) + "/" +
                           std::string(kv_dtype_name(c.v_dtype)) + " head_dim " +
                           std::to_string(c.head_dim) + " block " + std::to_string(c.block_size);
  const QuantErrorSums& want_k = observer.quant_error_k(layer);
  const QuantErrorSums& want_v = observer.quant_error_v(layer);
  ASSERT_EQ(want_k.count, c.length * kv_dim) << what;
  expect_sums_near(got.k_sq_error, want_k.sq_error, what + " K error");
  expect_sums_near(got.k_sq_exact, want_k.sq_exact, what + " K exact");
  expect_sums_near(got.v_sq_error, want_v.sq_error, what + " V error");
  expect_sums_near(got.v_sq_exact, want_v.sq_exact, what + " V exact");
  if (c.k_dtype != KvDtype::F16) {
    EXPECT_GT(got.k_sq_error, 0.0) << what;
  }
}

TEST(CudaKvQuantError, SumsMatchTheCpuMeasurementForEveryDtypePair) {
  KVSCOPE_REQUIRE_CUDA();
  const std::pair<KvDtype, KvDtype> dtypes[] = {{KvDtype::F16, KvDtype::F16},
                                                {KvDtype::Int8, KvDtype::Int8},
                                                {KvDtype::Int4, KvDtype::Int4},
                                                {KvDtype::Int4, KvDtype::F16}};
  for (const auto& [kd, vd] : dtypes) {
    for (const int head_dim : {8, 10, 64, 100, 128}) {
      for (const int block_size : {1, 16}) {
        KvCase c;
        c.k_dtype = kd;
        c.v_dtype = vd;
        c.head_dim = head_dim;
        c.block_size = block_size;
        c.length = 2 * block_size + 5;
        check_error_sums(c);
      }
    }
  }
}

// The live panel's KV error on a GPU: the CUDA backend records what it measured into the
// cache manager's per-layer sums, as the CPU backend does. The two decoders compute K and V
// in different summation orders, so the errors agree closely, not bit for bit.
TEST(CudaKvQuantError, TheBackendRecordsPerLayerErrorsCloseToTheCpuDecoders) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  std::vector<TokenId> prompt{1};
  for (int i = 0; i < 60; ++i) prompt.push_back(3 + (i * 29) % 500);
  // both decoders with float activations and no exact tail (the CPU's defaults are 8-bit
  // codes and two exact blocks, which change the K and V later layers see)
  auto options = [](const std::string& backend) {
    EngineOptions o;
    o.backend = parse_backend_choice(backend);
    o.q8_activations = false;
    o.k_dtype = KvDtype::Int4;
    o.v_dtype = KvDtype::Int8;
    o.kv_exact_tail_blocks = 0;
    o.context_length = 256;
    CudaBackendOptions c;
    c.f32_weights_as_f16 = false;
    c.gemm_min_tokens = 0;
    c.q8_activations = false;
    o.cuda_factory = cuda_backend_factory(c);
    return o;
  };
  Engine cpu(model, options("cpu")), gpu(model, options("cuda"));
  ASSERT_FALSE(gpu.backend().uses_host_kv_storage()) << gpu.backend_note();
  cpu.evaluate(prompt);
  gpu.evaluate(prompt);
  for (std::int64_t layer = 0; layer < cpu.spec().n_layers; ++layer) {
    for (const bool k : {true, false}) {
      const QuantErrorSums& want =
          k ? cpu.kv_observer().quant_error_k(layer) : cpu.kv_observer().quant_error_v(layer);
      const QuantErrorSums& got =
          k ? gpu.kv_observer().quant_error_k(layer) : gpu.kv_observer().quant_error_v(layer);
      ASSERT_EQ(got.count, want.count) << "layer " << layer;
      EXPECT_GT(got.sq_error, 0.0) << "layer " << layer;
      EXPECT_NEAR(got.relative_rms_error(), want.relative_rms_error(),
                  0.02 * want.relative_rms_error())
          << "layer " << layer << (k ? " K" : " V");
    }
  }
}

}  // namespace
}  // namespace kvscope
