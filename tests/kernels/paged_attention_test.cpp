// Paged GQA attention on the device against the reference attention
// (cpu/attention/reference_attention.h) on KV caches the CPU wrote, for both kernels: the
// generic one (every layout) and the fast decode kernel (the layouts
// fast_attention_unsupported accepts), which is also held to the generic
// kernel's result closely. Every KV dtype pair (int4 K read through its block's offsets),
// head_dim 8..256, GQA groups 1..12 (head tiles), block sizes 1..64, shuffled block tables,
// sliding windows, long contexts with many splits (the log-sum-exp merge), decode tokens of
// several sequences in one launch and causal prompt chunks. The eligibility rules and the
// split count are host logic, tested without a device.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "attention/paged_attention_choice.cuh"
#include "backend/kernel_launchers.h"
#include "cpu/attention/reference_attention.h"
#include "kv_test_fixture.h"
#include "util/error.h"

namespace kvscope {
namespace {

using cuda::AttentionKernel;
using test::kTestSeq;
using test::KvCase;

constexpr KvDtype kDtypes[] = {KvDtype::F16, KvDtype::Int8, KvDtype::Int4};

// KV heads that make n_kv_heads x block_size a multiple of 8, so that every section of a
// block (each a whole number of even-sized vectors) starts 16-byte aligned at any head_dim;
// with blocks of 16 or 64 the fixture's 2 heads do.
int aligned_kv_heads(int block_size) {
  return block_size % 4 == 0 ? 2 : 8;
}

std::string describe(const KvCase& c, int group, int n_splits) {
  return std::string(kv_dtype_name(c.k_dtype)) + "/" + std::string(kv_dtype_name(c.v_dtype)) +
         " head_dim " + std::to_string(c.head_dim) + " block " + std::to_string(c.block_size) +
         " group " + std::to_string(group) + " splits " + std::to_string(n_splits) + " window " +
         std::to_string(c.window);
}

// One step's attention on the device: the pool of group 0 (and its exact-tail copies, if
// any), the step's ints as plan_step packs them for `chunks`, the query and the outputs.
struct DeviceAttention {
  test::TestStep step;  // its plan and ints (chunks given by the caller)
  cuda::DeviceBuffer pool, copies, q, out, partial;
  cuda::AttentionArgs args;
  std::size_t n_out = 0;

  DeviceAttention(const KvCacheManager& kv, std::span<const SequenceChunk> chunks,
                  std::int64_t layer, int n_heads, int n_splits, const std::vector<float>& host_q) {
    const KvBlockLayout& L = kv.layout(0);
    const auto pool_bytes = static_cast<std::size_t>(kv.pool(0).n_blocks() * L.block_bytes());
    pool = test::device_zeros<std::uint8_t>(pool_bytes);
    pool.upload(kv.bytes().block_data(0, 0), pool_bytes);  // host storage: blocks back to back
    step.plan = cuda::plan_step(chunks, kv, 1, kv.config().max_context);
    step.ints = test::to_device(step.plan.ints);
    args.n_tokens = static_cast<int>(step.plan.n_tokens);
    args.n_heads = n_heads;
    args.n_splits = n_splits;
    args.scale = 1.0f / std::sqrt(static_cast<float>(L.head_dim));
    args.layout = cuda::kv_layer_layout(L, layer);
    copies = test::device_copies(kv);
    args.tables =
        test::step_tables(step, pool.as<std::uint8_t>(), &kv, layer, copies.as<std::uint8_t>());
    q = test::to_device(host_q);
    n_out = host_q.size();
    partial = test::device_zeros<float>(static_cast<std::size_t>(cuda::attention_partial_floats(
        args.n_tokens, n_heads, static_cast<int>(L.head_dim), n_splits)));
  }

  const char* fast_unsupported() const {
    return cuda::fast_attention_unsupported(args, q.as<const float>());
  }

  std::vector<float> run(AttentionKernel kernel) {
    out = test::device_zeros<float>(n_out);
    cuda::launch_paged_attention_with(kernel, args, q.as<float>(), partial.as<float>(),
                                      out.as<float>(), nullptr);
    return test::from_device<float>(out, n_out);
  }
};

// The reference attention (cpu/attention/reference_attention.h) of every token of every
// chunk, in chunk order: q and the result [tokens][n_heads][hd].
std::vector<float> reference(const KvCacheManager& kv, std::span<const SequenceChunk> chunks,
                             std::int64_t layer, int n_heads, const std::vector<float>& q,
                             float softcap = 0.0f) {
  const KvCacheConfig& c = kv.config();
  const std::int64_t q_dim = n_heads * c.head_dim;
  std::vector<float> ref(q.size());
  std::int64_t at = 0;
  for (const SequenceChunk& chunk : chunks) {
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(chunk.tokens.size()); ++i, ++at) {
      reference_attention(kv, chunk.seq, layer, {n_heads, c.n_kv_heads, c.head_dim, softcap},
                          chunk.start_pos + i, std::span<const float>(q).subspan(at * q_dim, q_dim),
                          std::span<float>(ref).subspan(at * q_dim, q_dim));
    }
  }
  return ref;
}

// Runs both kernels on the chunks and checks them against the CPU, and the fast kernel
// against the generic one (float accumulation both, so closely). expect_fast: the layout is
// one the fast kernel must take (no silent fallback hides it from these tests).
void check_kernels(const KvCacheManager& kv, std::span<const SequenceChunk> chunks,
                   std::int64_t layer, int n_heads, int n_splits, bool expect_fast,
                   const std::string& what, float softcap = 0.0f) {
  const KvCacheConfig& c = kv.config();
  std::int64_t n_tokens = 0;
  for (const SequenceChunk& chunk : chunks)
    n_tokens += static_cast<std::int64_t>(chunk.tokens.size());
  const auto q =
      test::random_floats(static_cast<std::size_t>(n_tokens * n_heads * c.head_dim), 5, 2.0f);
  const std::vector<float> ref = reference(kv, chunks, layer, n_heads, q, softcap);
  DeviceAttention d(kv, chunks, layer, n_heads, n_splits, q);
  d.args.softcap = softcap;
  // the kernels accumulate in float, the reference in double
  const float abs = 1e-4f, rel = 1e-3f;
  const std::vector<float> generic = d.run(AttentionKernel::Generic);
  test::expect_close(generic, ref, abs, rel, "generic " + what);
  const char* why = d.fast_unsupported();
  if (expect_fast) {
    ASSERT_EQ(why, nullptr) << what << ": " << why;
  } else {
    ASSERT_NE(why, nullptr) << what << ": the fast kernel should not take this layout";
    EXPECT_EQ(cuda::chosen_attention_kernel(d.args, d.q.as<const float>()),
              AttentionKernel::Generic);
    return;
  }
  const std::vector<float> fast = d.run(AttentionKernel::Fast);
  test::expect_close(fast, ref, abs, rel, "fast " + what);
  test::expect_close(fast, generic, 2e-5f, 2e-4f, "fast vs generic " + what);
}

// The test sequence of `c` (shuffled blocks) with every visible key of its last n_query
// tokens written, and those tokens as one chunk.
struct OneSequence {
  KvCacheManager kv;
  std::vector<TokenId> ids;
  SequenceChunk chunk;

  OneSequence(const KvCase& c, int n_query) : kv(test::make_shuffled_kv(c)) {
    const std::int64_t layer = c.n_layers - 1, kv_dim = c.n_kv_heads * c.head_dim;
    const auto k = test::random_floats(static_cast<std::size_t>(c.length * kv_dim), 3, 2.0f);
    const auto v = test::random_floats(static_cast<std::size_t>(c.length * kv_dim), 4, 2.0f);
    const std::int64_t start = c.length - n_query;
    // from the start of the block of the first visible key: an int4 key block's offsets are
    // set by its slot-0 token, which a decode that wrote the whole sequence has written too
    const std::int64_t first = kv.first_visible_position(0, start) / c.block_size * c.block_size;
    for (std::int64_t pos = first; pos < c.length; ++pos) {
      kv.bytes().write_token(kTestSeq, layer, pos, &k[pos * kv_dim], &v[pos * kv_dim]);
    }
    ids.assign(static_cast<std::size_t>(n_query), 0);
    chunk = SequenceChunk{kTestSeq, ids, start, false};
  }
};

void check_one_sequence(const KvCase& c, int group, int n_query, int n_splits, bool expect_fast,
                        float softcap = 0.0f) {
  const OneSequence s(c, n_query);
  check_kernels(s.kv, {&s.chunk, 1}, c.n_layers - 1, c.n_kv_heads * group, n_splits, expect_fast,
                describe(c, group, n_splits) + " len " + std::to_string(c.length) + " queries " +
                    std::to_string(n_query) + " softcap " + std::to_string(softcap),
                softcap);
}

TEST(CudaPagedAttention, BothKernelsMatchTheCpuForEveryDtypePairHeadDimAndBlockSize) {
  KVSCOPE_REQUIRE_CUDA();
  for (const KvDtype kd : kDtypes) {
    for (const KvDtype vd : kDtypes) {
      for (const int head_dim : {64, 96, 128, 256}) {  // 96: 12 lanes of a 16-lane team
        for (const int block_size : {1, 7, 16, 64}) {  // 7: chunks run past a block's end
          for (const int n_splits : {1, 3}) {
            KvCase c;
            c.k_dtype = kd;
            c.v_dtype = vd;
            c.head_dim = head_dim;
            c.block_size = block_size;
            c.n_kv_heads = aligned_kv_heads(block_size);
            c.length = 3 * block_size + 11;  // crosses block boundaries, a partial tail block
            check_one_sequence(c, head_dim == 256 ? 2 : 4, 1, n_splits, true);
          }
        }
      }
    }
  }
}

// Every other head_dim (8..80; 10 and 14 make int4 K groups of 5 and 7 that straddle a
// byte) runs on the generic kernel only, decode and a 3-token prompt chunk alike.
TEST(CudaPagedAttention, OtherHeadDimsFallBackToTheGenericKernelAndMatchTheCpu) {
  KVSCOPE_REQUIRE_CUDA();
  for (const KvDtype dtype : kDtypes) {
    for (const int head_dim : {8, 10, 14, 40, 72, 80}) {
      for (const int block_size : {1, 3, 16}) {
        KvCase c;
        c.k_dtype = c.v_dtype = dtype;
        c.head_dim = head_dim;
        c.block_size = block_size;
        c.length = 4 * block_size + 5;
        check_one_sequence(c, 2, 1, 3, false);
        check_one_sequence(c, 2, 3, 1, false);
      }
    }
  }
}

TEST(CudaPagedAttention, LongContextsSplitManyWaysMatchTheCpu) {
  KVSCOPE_REQUIRE_CUDA();
  const std::pair<KvDtype, KvDtype> dtypes[] = {{KvDtype::F16, KvDtype::F16},
                                                {KvDtype::Int8, KvDtype::Int8},
                                                {KvDtype::Int4, KvDtype::Int4},
                                                {KvDtype::Int8, KvDtype::Int4}};
  for (const auto& [kd, vd] : dtypes) {
    for (const int n_splits : {1, 7, 50, 128}) {
      KvCase c;
      c.k_dtype = kd;
      c.v_dtype = vd;
      c.head_dim = 128;
      c.block_size = 16;
      c.length = 3000;  // 188 blocks, the last one partial
      check_one_sequence(c, 4, 1, n_splits, true);
    }
  }
}

TEST(CudaPagedAttention, GqaGroupsFromOneToTwelveUseHeadTiles) {
  KVSCOPE_REQUIRE_CUDA();
  // 3: a tile of 4 with one spare head; 5..8: one tile of 8; 12: two tiles of 8 (4 spare)
  for (const int group : {1, 2, 3, 4, 5, 8, 12}) {
    for (const KvDtype dtype : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
      KvCase c;
      c.k_dtype = c.v_dtype = dtype;
      c.head_dim = 128;
      c.block_size = 16;
      c.length = 200;
      check_one_sequence(c, group, 1, 4, true);
    }
  }
}

TEST(CudaPagedAttention, PromptChunksAreCausalAndMixedDtypesWork) {
  KVSCOPE_REQUIRE_CUDA();
  const std::pair<KvDtype, KvDtype> dtypes[] = {{KvDtype::Int8, KvDtype::Int4},
                                                {KvDtype::Int4, KvDtype::F16},
                                                {KvDtype::Int4, KvDtype::Int8}};
  for (const auto& [kd, vd] : dtypes) {
    for (const int head_dim : {64, 96}) {  // 96: fast; the generic kernel takes both
      for (const int group : {1, 3, 8}) {
        for (const int n_splits : {1, 4}) {
          KvCase c;
          c.k_dtype = kd;
          c.v_dtype = vd;
          c.head_dim = head_dim;
          c.block_size = 16;
          c.length = 75;
          check_one_sequence(c, group, 20, n_splits, true);  // tokens 55..74, own prefix only
        }
      }
    }
  }
}

// A group with an exact tail (kv/exact_tail.h): the generic kernel reads the blocks a token
// reads exactly from their fp16 copies, as the CPU does, for decode tokens and prompt chunks
// that cross blocks (tokens of one chunk reading a block from either side), split or not;
// the fast kernel leaves such a group to it.
TEST(CudaPagedAttention, TheGenericKernelReadsTheExactTailAsTheCpuDoes) {
  KVSCOPE_REQUIRE_CUDA();
  const std::pair<KvDtype, KvDtype> dtypes[] = {{KvDtype::Int4, KvDtype::Int4},
                                                {KvDtype::Int8, KvDtype::Int8},
                                                {KvDtype::Int4, KvDtype::F16}};
  for (const auto& [kd, vd] : dtypes) {
    for (const int tail : {1, 2}) {
      for (const int block_size : {4, 16}) {
        for (const int n_query : {1, 20}) {
          for (const int n_splits : {1, 3}) {
            KvCase c;
            c.k_dtype = kd;
            c.v_dtype = vd;
            c.head_dim = 64;
            c.block_size = block_size;
            c.length = 75;
            c.exact_tail = tail;
            const OneSequence s(c, n_query);
            ASSERT_NE(s.kv.exact_tail(0), nullptr);
            check_kernels(s.kv, {&s.chunk, 1}, c.n_layers - 1, c.n_kv_heads * 3, n_splits,
                          /*expect_fast=*/false,
                          describe(c, 3, n_splits) + " exact tail " + std::to_string(tail) +
                              " queries " + std::to_string(n_query));
          }
        }
      }
    }
  }
}

TEST(CudaPagedAttention, SlidingWindowReadsOnlyTheVisibleKeys) {
  KVSCOPE_REQUIRE_CUDA();
  for (const int block_size : {1, 4, 16}) {
    for (const KvDtype dtype : kDtypes) {
      KvCase c;
      c.k_dtype = dtype;
      c.v_dtype = KvDtype::Int8;
      c.head_dim = 128;
      c.block_size = block_size;
      c.length = 100;
      c.window = 13;  // first > 0, inside a block: the split starts mid-block
      // decode reads what is held: blocks the window dropped are gone
      check_one_sequence(c, 4, 1, 2, true);
      check_one_sequence(c, 4, 1, 1, true);
    }
  }
}

// Gemma 2's soft-capped scores (cap 1 bends these random scores of a few units hard) in both
// kernels, every K dtype, prompt chunks and decode, split and not.
TEST(CudaPagedAttention, SoftCappedScoresMatchTheCpu) {
  KVSCOPE_REQUIRE_CUDA();
  for (const KvDtype dtype : kDtypes) {
    KvCase c;
    c.k_dtype = dtype;
    c.v_dtype = KvDtype::F16;
    c.head_dim = 64;
    c.block_size = 16;
    c.length = 70;
    for (const float cap : {1.0f, 50.0f}) {
      check_one_sequence(c, 4, 1, 2, true, cap);
      check_one_sequence(c, 2, 9, 1, true, cap);
    }
  }
}

// Decode tokens of five sequences of different lengths (one token, one short, one long) in
// one launch, then one sequence's prompt chunk with the others' decode tokens.
TEST(CudaPagedAttention, SeveralSequencesOfDifferentLengthsShareOneLaunch) {
  KVSCOPE_REQUIRE_CUDA();
  const int lengths[] = {1, 17, 300, 1000, 64};
  for (const KvDtype dtype : kDtypes) {
    KvCacheConfig config;
    config.groups = uniform_layer_groups(1, dtype);
    config.groups[0].v_dtype = dtype == KvDtype::F16 ? KvDtype::Int8 : KvDtype::F16;
    config.n_kv_heads = 2;
    config.head_dim = 128;
    config.block_size = 16;
    config.max_context = 4096;
    config.n_blocks = 200;
    KvCacheManager kv(config);
    for (SeqId s = 1; s <= 5; ++s) kv.add_sequence(s);
    // grown in rounds, so the sequences' blocks interleave in the pool
    for (int have = 0; have < 1000; have += 37) {
      for (SeqId s = 1; s <= 5; ++s) {
        const int want = std::min(lengths[s - 1], have + 37);
        if (want > kv.n_tokens(s)) kv.grow(s, want - kv.n_tokens(s));
      }
    }
    const std::int64_t kv_dim = config.n_kv_heads * config.head_dim;
    for (SeqId s = 1; s <= 5; ++s) {
      const int n = lengths[s - 1];
      const auto seed = static_cast<std::uint32_t>(10 * s);
      const auto k = test::random_floats(static_cast<std::size_t>(n * kv_dim), seed, 2.0f);
      const auto v = test::random_floats(static_cast<std::size_t>(n * kv_dim), seed + 1, 2.0f);
      for (std::int64_t pos = 0; pos < n; ++pos) {
        kv.bytes().write_token(s, 0, pos, &k[pos * kv_dim], &v[pos * kv_dim]);
      }
    }
    const std::vector<TokenId> one(1, 0), twenty(20, 0);
    std::vector<SequenceChunk> decode;
    for (SeqId s = 1; s <= 5; ++s) decode.push_back({s, one, lengths[s - 1] - 1, false});
    const std::string what = std::string(kv_dtype_name(dtype)) + " keys, five sequences";
    check_kernels(kv, decode, 0, 8, 8, true, what + " decoding");
    std::vector<SequenceChunk> mixed = decode;
    mixed[3] = {4, twenty, lengths[3] - 20, false};  // tokens 980..999 of sequence 4
    check_kernels(kv, mixed, 0, 8, 3, true, what + " with a prompt chunk");
  }
}

// --- Host logic: no device needed ------------------------------------------------------

// Arguments for one decode token over a layout; only the pool's and q's addresses (never
// dereferenced) and the layout matter to the eligibility rules.
cuda::AttentionArgs host_args(KvDtype kd, KvDtype vd, int head_dim, int n_kv_heads,
                              int block_size) {
  const KvBlockLayout layout = KvBlockLayout::make(kd, vd, 2, n_kv_heads, head_dim, block_size);
  cuda::AttentionArgs a;
  a.n_tokens = 1;
  a.n_heads = 4 * n_kv_heads;
  a.n_splits = 8;
  a.layout = cuda::kv_layer_layout(layout, 1);
  a.tables.pool = reinterpret_cast<std::uint8_t*>(std::uintptr_t{1} << 20);
  return a;
}

const float* kAlignedQ = reinterpret_cast<const float*>(std::uintptr_t{1} << 21);

TEST(PagedAttentionChoice, TheFastKernelTakesHeadDims64To256OfEveryDtypePair) {
  for (const KvDtype kd : kDtypes) {
    for (const KvDtype vd : kDtypes) {
      for (const int head_dim : {64, 96, 128, 256}) {
        const cuda::AttentionArgs a = host_args(kd, vd, head_dim, 8, 16);
        const char* why = cuda::fast_attention_unsupported(a, kAlignedQ);
        EXPECT_EQ(why, nullptr) << kv_dtype_name(kd) << "/" << kv_dtype_name(vd) << " head_dim "
                                << head_dim << ": " << why;
      }
    }
  }
}

TEST(PagedAttentionChoice, OtherHeadDimsAndMisalignedLoadsGoToTheGenericKernel) {
  for (const int head_dim : {8, 40, 72, 80, 112, 192, 512}) {
    const cuda::AttentionArgs a = host_args(KvDtype::F16, KvDtype::F16, head_dim, 8, 16);
    EXPECT_NE(cuda::fast_attention_unsupported(a, kAlignedQ), nullptr) << head_dim;
    EXPECT_EQ(cuda::chosen_attention_kernel(a, kAlignedQ), AttentionKernel::Generic) << head_dim;
  }
  cuda::AttentionArgs a = host_args(KvDtype::Int8, KvDtype::Int8, 128, 8, 16);
  EXPECT_NE(cuda::fast_attention_unsupported(a, kAlignedQ + 1), nullptr) << "q off by 4 bytes";
  a.tables.pool += 8;
  EXPECT_NE(cuda::fast_attention_unsupported(a, kAlignedQ), nullptr) << "pool off by 8 bytes";
  a = host_args(KvDtype::Int8, KvDtype::Int8, 128, 8, 16);
  a.n_splits = 5000;
  EXPECT_NE(cuda::fast_attention_unsupported(a, kAlignedQ), nullptr) << "5000 splits";
  // int4 K, head_dim 64, 1 KV head, blocks of 1: K data 32 B, K scales 16 (4 groups of 16
  // x (s, m)), V data 32, V scales 4, so the K offsets start at 84 and a layer takes 212
  // bytes; layer 1's at 296, not 16-byte aligned
  a = host_args(KvDtype::Int4, KvDtype::Int4, 64, 1, 1);
  EXPECT_EQ(a.layout.k_offsets, 296);
  EXPECT_NE(cuda::fast_attention_unsupported(a, kAlignedQ), nullptr) << "offsets at 296";
}

TEST(PagedAttentionChoice, TheEnvironmentOrTheLayoutPicksTheKernel) {
  const cuda::AttentionArgs a = host_args(KvDtype::Int8, KvDtype::Int4, 128, 8, 16);
  const char* env = std::getenv("KVSCOPE_ATTENTION_KERNEL");
  const bool forced = env != nullptr && std::strcmp(env, "generic") == 0;
  EXPECT_EQ(cuda::chosen_attention_kernel(a, kAlignedQ),
            forced ? AttentionKernel::Generic : AttentionKernel::Fast);
  EXPECT_STREQ(cuda::attention_kernel_name(AttentionKernel::Fast), "fast");
  EXPECT_STREQ(cuda::attention_kernel_name(AttentionKernel::Generic), "generic");
}

TEST(PagedAttentionChoice, ForcingTheFastKernelOnALayoutItCannotRunIsAUsageError) {
  const cuda::AttentionArgs a = host_args(KvDtype::F16, KvDtype::F16, 80, 8, 16);
  // rejected before anything touches the device (the pointers are never dereferenced)
  EXPECT_THROW(cuda::launch_paged_attention_with(AttentionKernel::Fast, a, kAlignedQ, nullptr,
                                                 nullptr, nullptr),
               UsageError);
}

TEST(PagedAttentionChoice, SplitsFillThreeCtasPerSmInOneWaveWithAtLeast64KeysEach) {
  // Llama-3-8B decode at 16k on 132 SMs: 3 * 132 / 8 = 49 splits of ~334 keys, 392 CTAs
  // (one wave: 50 would make 400, four more than 3 per SM)
  EXPECT_EQ(cuda::attention_splits(1, 32, 8, 16384, 132), 49);                  // 3 CTAs per SM
  EXPECT_EQ(cuda::attention_splits(1, 32, 8, 1024, 132), 16);                   // 64 keys each
  EXPECT_EQ(cuda::attention_splits(1, 4, 1, std::int64_t{1} << 20, 132), 128);  // the cap
  EXPECT_EQ(cuda::attention_splits(512, 32, 8, 4096, 132), 1);  // a prompt fills the GPU
  EXPECT_EQ(cuda::attention_splits(1, 32, 8, 10, 132), 1);      // too few keys to split
  EXPECT_EQ(cuda::attention_splits(1, 64, 8, 16384, 132), 33);  // tiles of 8: 2 CTAs per SM
  EXPECT_EQ(cuda::attention_splits(1, 96, 8, 16384, 132), 16);  // 12 heads: two tiles each
  EXPECT_EQ(cuda::attention_partial_floats(2, 32, 128, 50), 2 * 32 * 50 * 130);
  EXPECT_EQ(cuda::attention_partial_floats(2, 32, 128, 1), 0);
}

}  // namespace
}  // namespace kvscope
