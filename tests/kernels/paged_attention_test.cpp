// Paged GQA attention on the device against the CPU paged_attention (cpu_attention.h) on a
// KV cache the CPU wrote: every KV dtype (int4 K read through its block's offsets), head_dim
// 8..256, GQA groups 1..8, block sizes 1..64, shuffled block tables, sliding windows, decode
// (one query) and prompt chunks (causal), with 1 split and with several (the log-sum-exp
// merge).
#include <cmath>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_launchers.h"
#include "kv_test_fixture.h"
#include "run/cpu_attention.h"
#include "run/thread_pool.h"

namespace kvscope {
namespace {

using test::kTestSeq;
using test::KvCase;

struct AttnCase {
  KvCase kv;
  int group = 4;    // query heads per KV head
  int n_query = 1;  // the last n_query tokens are the queries
  int n_splits = 1;
};

void check_attention(const AttnCase& a) {
  const KvCase& c = a.kv;
  KvCacheManager kv = test::make_shuffled_kv(c);
  const std::int64_t layer = c.n_layers - 1;
  const std::int64_t kv_dim = c.n_kv_heads * c.head_dim;
  const auto k = test::random_floats(static_cast<std::size_t>(c.length * kv_dim), 3, 2.0f);
  const auto v = test::random_floats(static_cast<std::size_t>(c.length * kv_dim), 4, 2.0f);
  // every key a query may see: [first visible of the first query, length)
  const std::int64_t start = c.length - a.n_query;
  for (std::int64_t pos = kv.first_visible_position(0, start); pos < c.length; ++pos) {
    kv.write_token(kTestSeq, layer, pos, &k[pos * kv_dim], &v[pos * kv_dim]);
  }
  const int n_heads = c.n_kv_heads * a.group;
  const std::int64_t q_dim = n_heads * c.head_dim;
  const auto q = test::random_floats(static_cast<std::size_t>(a.n_query * q_dim), 5, 2.0f);

  ThreadPool pool(1);
  std::vector<float> ref(q.size());
  paged_attention(pool, kv, kTestSeq, layer, {n_heads, c.n_kv_heads, c.head_dim}, start, a.n_query,
                  q, ref);

  const KvBlockLayout& L = kv.layout(0);
  const auto pool_bytes = static_cast<std::size_t>(kv.pool(0).n_blocks() * L.block_bytes());
  auto dpool = test::device_zeros<std::uint8_t>(pool_bytes);
  dpool.upload(kv.block_data(0, 0), pool_bytes);  // one allocation: blocks back to back
  test::TestStep step;
  test::make_step(kv, start, a.n_query, step);
  cuda::AttentionArgs args;
  args.n_tokens = a.n_query;
  args.n_heads = n_heads;
  args.n_splits = a.n_splits;
  args.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  args.layout = cuda::kv_layer_layout(L, layer);
  args.tables = test::step_tables(step, dpool.as<std::uint8_t>());
  auto dq = test::to_device(q);
  auto dout = test::device_zeros<float>(q.size());
  auto dpartial = test::device_zeros<float>(static_cast<std::size_t>(
      cuda::attention_partial_floats(a.n_query, n_heads, c.head_dim, a.n_splits)));
  cuda::launch_paged_attention(args, dq.as<float>(), dpartial.as<float>(), dout.as<float>(),
                               nullptr);
  // the CPU's fp16 path accumulates in fp16 as llama.cpp does; the GPU in float
  const bool f16 = c.k_dtype == KvDtype::F16 && c.v_dtype == KvDtype::F16;
  test::expect_close(
      test::from_device<float>(dout, q.size()), ref, f16 ? 4e-3f : 1e-4f, f16 ? 1e-2f : 1e-3f,
      std::string(kv_dtype_name(c.k_dtype)) + "/" + std::string(kv_dtype_name(c.v_dtype)) +
          " head_dim " + std::to_string(c.head_dim) + " block " + std::to_string(c.block_size) +
          " len " + std::to_string(c.length) + " group " + std::to_string(a.group) + " queries " +
          std::to_string(a.n_query) + " splits " + std::to_string(a.n_splits) + " window " +
          std::to_string(c.window));
}

TEST(CudaPagedAttention, MatchesTheCpuReferenceAcrossDtypesShapesAndSplits) {
  KVSCOPE_REQUIRE_CUDA();
  for (const KvDtype dtype : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    for (const int head_dim : {8, 40, 64, 128, 256}) {
      for (const int block_size : {1, 7, 16, 64}) {
        for (const int n_splits : {1, 3, 8}) {
          AttnCase a;
          a.kv.k_dtype = a.kv.v_dtype = dtype;
          a.kv.head_dim = head_dim;
          a.kv.block_size = block_size;
          a.kv.length = 3 * block_size + 11;
          a.group = head_dim == 256 ? 2 : 4;
          a.n_splits = n_splits;
          check_attention(a);
        }
      }
    }
  }
}

TEST(CudaPagedAttention, PromptChunksAreCausalAndMixedDtypesWork) {
  KVSCOPE_REQUIRE_CUDA();
  // int4 K is offset int4 (its block's offsets), int4 V the symmetric format
  const std::pair<KvDtype, KvDtype> dtypes[] = {{KvDtype::Int8, KvDtype::Int4},
                                                {KvDtype::Int4, KvDtype::F16},
                                                {KvDtype::Int4, KvDtype::Int8}};
  for (const auto& [kd, vd] : dtypes) {
    for (const int group : {1, 3, 8}) {
      AttnCase a;
      a.kv.k_dtype = kd;
      a.kv.v_dtype = vd;
      a.kv.head_dim = 96;
      a.kv.block_size = 16;
      a.kv.length = 75;
      a.group = group;
      a.n_query = 20;  // tokens 55..74, each seeing its own prefix only
      check_attention(a);
      a.n_splits = 4;
      check_attention(a);
    }
  }
}

// head_dim 10 and 14: int4 K groups of 5 and 7 straddle a byte.
TEST(CudaPagedAttention, Int4KeysWithGroupsThatStraddleAByteMatchTheCpu) {
  KVSCOPE_REQUIRE_CUDA();
  for (const int head_dim : {10, 14, 72}) {
    for (const int block_size : {3, 16}) {
      AttnCase a;
      a.kv.k_dtype = KvDtype::Int4;
      a.kv.v_dtype = KvDtype::Int4;
      a.kv.head_dim = head_dim;
      a.kv.block_size = block_size;
      a.kv.length = 4 * block_size + 5;
      a.group = 2;
      a.n_query = 3;
      check_attention(a);
    }
  }
}

TEST(CudaPagedAttention, SlidingWindowReadsOnlyTheVisibleKeys) {
  KVSCOPE_REQUIRE_CUDA();
  for (const int block_size : {1, 4, 16}) {
    AttnCase a;
    a.kv.k_dtype = block_size == 4 ? KvDtype::Int4 : KvDtype::Int8;
    a.kv.v_dtype = KvDtype::Int8;
    a.kv.head_dim = 64;
    a.kv.block_size = block_size;
    a.kv.length = 100;
    a.kv.window = 13;
    a.n_query = 1;  // blocks the window dropped are gone: decode reads what is held
    a.n_splits = 2;
    check_attention(a);
  }
}

}  // namespace
}  // namespace kvscope
