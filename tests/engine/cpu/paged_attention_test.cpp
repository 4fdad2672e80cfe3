// The reference attention (reference_attention.h) is exact attention over the values the
// cache stores, derived here a second way. The CPU decoder's paged_attention against it: on
// an fp16 cache in GgmlOrder math it is llama.cpp's flash attention (ggml_flash_attn.h) bit
// for bit whatever the block size, the order of the blocks in the pool or the query chunk; in
// Float math, and on a quantized cache, it is the reference to float precision, with the same
// bits whatever the threads. Sliding windows read only the visible keys.
#include "cpu/attention/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/attention/ggml_flash_attn.h"
#include "cpu/attention/reference_attention.h"
#include "cpu/simd_dispatch.h"
#include "cpu/thread_pool.h"
#include "kv/format/kv_format.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {
namespace {

constexpr SeqId kSeq = 1;

struct Case {
  KvDtype dtype = KvDtype::F16;
  int head_dim = 8;
  int n_kv_heads = 2;
  int group = 2;  // query heads per KV head
  int block_size = 16;
  int length = 40;  // tokens in the cache
  int n_query = 1;  // the last n_query tokens are the queries
  int window = 0;
  int threads = 1;
  int exact_tail = 0;    // blocks a query reads from fp16 copies (quantized dtypes; exact_tail.h)
  float softcap = 0.0f;  // scores s -> softcap * tanh(s / softcap) (Gemma 2); 0: off

  std::string name() const {
    return std::string(kv_dtype_name(dtype)) + " head_dim " + std::to_string(head_dim) + " group " +
           std::to_string(group) + " block " + std::to_string(block_size) + " len " +
           std::to_string(length) + " queries " + std::to_string(n_query) + " window " +
           std::to_string(window) + " exact tail " + std::to_string(exact_tail) + " softcap " +
           std::to_string(softcap);
  }
};

std::vector<float> random_floats(std::size_t n, unsigned seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// A cache whose test sequence owns out-of-order blocks (grown in uneven steps beside a
// filler sequence that is freed again), with K/V of the last layer written for every token.
struct Fixture {
  KvCacheManager kv;
  std::vector<float> k, v;  // [length][n_kv_heads][head_dim] as written

  static KvCacheConfig config(const Case& c) {
    KvCacheConfig cfg;
    cfg.groups = uniform_layer_groups(2, c.dtype, c.window);
    cfg.n_kv_heads = c.n_kv_heads;
    cfg.head_dim = c.head_dim;
    cfg.block_size = c.block_size;
    cfg.max_context = 4096;
    // the filler sequence below takes about one block every ten tokens
    cfg.n_blocks = 2 * ((c.length + c.block_size - 1) / c.block_size) + c.length / 8 + 8;
    if (c.exact_tail > 0) {
      cfg.exact_tail_blocks = c.exact_tail;
      cfg.exact_tail_shadows = cfg.n_blocks;  // every block can have one
    }
    return cfg;
  }

  explicit Fixture(const Case& c) : kv(config(c)) {
    kv.add_sequence(kSeq);
    kv.add_sequence(2);
    std::mt19937 rng(static_cast<unsigned>(c.length * 131 + c.block_size));
    const int kv_dim = c.n_kv_heads * c.head_dim;
    k = random_floats(static_cast<std::size_t>(c.length * kv_dim), 3, 1.5f);
    v = random_floats(static_cast<std::size_t>(c.length * kv_dim), 4, 1.0f);
    // with an exact tail the queries' own tokens come in one last grow, as in a forward step
    // (a grow drops the copies that the new positions' queries no longer read)
    const int before_queries = c.exact_tail > 0 ? c.length - c.n_query : c.length;
    for (int have = 0; have < c.length;) {
      const int left = have < before_queries ? before_queries - have : c.length - have;
      const int n =
          have < before_queries ? std::min<int>(left, 1 + static_cast<int>(rng() % 9)) : left;
      kv.grow(kSeq, n);
      for (int p = have; p < have + n; ++p) {
        kv.bytes().write_token(kSeq, 1, p, &k[p * kv_dim], &v[p * kv_dim]);
      }
      have += n;
      if (kv.can_grow(2, c.block_size) && rng() % 2) kv.grow(2, c.block_size);
    }
    kv.free_sequence(2);
  }
};

// llama.cpp's kernel over a contiguous fp16 copy of the visible keys, one run per query.
std::vector<float> expected_f16(const Case& c, const Fixture& f, const std::vector<float>& q) {
  const int hd = c.head_dim, kv_dim = c.n_kv_heads * hd, q_dim = c.n_kv_heads * c.group * hd;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> out(q.size());
  for (int t = 0; t < c.n_query; ++t) {
    const int pos = c.length - c.n_query + t;
    const int first = static_cast<int>(f.kv.first_visible_position(0, pos));
    for (int g = 0; g < c.n_kv_heads; ++g) {
      std::vector<std::uint16_t> k16, v16, q16(c.group * hd), acc(c.group * hd);
      for (int p = first; p <= pos; ++p) {
        for (int i = 0; i < hd; ++i) {
          k16.push_back(float_to_fp16(f.k[p * kv_dim + g * hd + i]));
          v16.push_back(float_to_fp16(f.v[p * kv_dim + g * hd + i]));
        }
      }
      std::vector<GgmlFlashHead> st(c.group);
      const float* qg = &q[t * q_dim + g * c.group * hd];
      for (int h = 0; h < c.group; ++h) {
        ggml_flash_begin(qg + h * hd, hd, &q16[h * hd], &acc[h * hd], st[h]);
      }
      ggml_flash_keys(k16.data(), v16.data(), hd, pos - first + 1, hd, scale, q16.data(),
                      acc.data(), st.data(), c.group, c.softcap);
      for (int h = 0; h < c.group; ++h) {
        ggml_flash_end(&acc[h * hd], st[h], hd, &out[t * q_dim + (g * c.group + h) * hd]);
      }
    }
  }
  return out;
}

// Softmax attention in double over what the cache holds (dequantized K and V). Values, and
// F16 / Int8 keys, are kv_quantize's; int4 keys are offset int4 against the fp16 of their
// block's first key (kv_format.h), recomputed here from the raw keys. With an exact tail, the
// blocks the query at `pos` reads exactly hold the fp16 of the raw values.
std::vector<double> expected_exact(const Case& c, const Fixture& f, const std::vector<float>& q) {
  const int hd = c.head_dim, kv_dim = c.n_kv_heads * hd, q_dim = c.n_kv_heads * c.group * hd;
  const auto stored = [&](const std::vector<float>& src, int p, int pos) {
    std::vector<float> x(src.begin() + p * kv_dim, src.begin() + (p + 1) * kv_dim), back(kv_dim);
    if (c.exact_tail > 0 && p / c.block_size > pos / c.block_size - c.exact_tail) {
      for (int i = 0; i < kv_dim; ++i) back[i] = fp16_to_float(float_to_fp16(x[i]));
      return back;
    }
    const bool offset_int4 = &src == &f.k && c.dtype == KvDtype::Int4;
    const int first = p / c.block_size * c.block_size;
    for (int g = 0; g < c.n_kv_heads; ++g) {
      if (offset_int4) {
        std::vector<std::uint16_t> offsets(static_cast<std::size_t>(hd));
        std::vector<std::uint8_t> data(
            static_cast<std::size_t>(kv_data_bytes_per_vector(KvDtype::Int4, hd)));
        std::vector<std::uint16_t> scales(
            static_cast<std::size_t>(kv_scales_per_vector(KvSide::K, KvDtype::Int4, hd)));
        kv_k4_set_offsets(&src[first * kv_dim + g * hd], hd, offsets.data());
        kv_k4_quantize(&x[g * hd], offsets.data(), hd, data.data(), scales.data());
        kv_k4_dequantize(data.data(), scales.data(), offsets.data(), hd, &back[g * hd]);
        continue;
      }
      std::vector<std::uint8_t> data(
          static_cast<std::size_t>(kv_data_bytes_per_vector(c.dtype, hd)));
      std::vector<std::uint16_t> scales(
          static_cast<std::size_t>(std::max<std::int64_t>(1, kv_scales_per_vector(c.dtype, hd))));
      kv_quantize(c.dtype, &x[g * hd], hd, data.data(), scales.data());
      kv_dequantize(c.dtype, data.data(), scales.data(), hd, &back[g * hd]);
    }
    return back;
  };
  std::vector<double> out(q.size());
  for (int t = 0; t < c.n_query; ++t) {
    const int pos = c.length - c.n_query + t;
    const int first = static_cast<int>(f.kv.first_visible_position(0, pos));
    for (int h = 0; h < c.n_kv_heads * c.group; ++h) {
      const int g = h / c.group;
      std::vector<double> w;
      double mx = -1e300, sum = 0;
      for (int p = first; p <= pos; ++p) {
        const auto kp = stored(f.k, p, pos);
        double d = 0;
        for (int i = 0; i < hd; ++i) d += double{q[t * q_dim + h * hd + i]} * kp[g * hd + i];
        const double s = d / std::sqrt(static_cast<double>(hd));
        w.push_back(c.softcap > 0 ? c.softcap * std::tanh(s / c.softcap) : s);
        mx = std::max(mx, w.back());
      }
      for (double& x : w) sum += (x = std::exp(x - mx));
      for (int p = first; p <= pos; ++p) {
        const auto vp = stored(f.v, p, pos);
        for (int i = 0; i < hd; ++i)
          out[t * q_dim + h * hd + i] += w[p - first] / sum * vp[g * hd + i];
      }
    }
  }
  return out;
}

std::vector<float> run(const Case& c, const Fixture& f, const std::vector<float>& q,
                       AttentionMath math = AttentionMath::GgmlOrder) {
  ThreadPool pool(c.threads);
  std::vector<float> out(q.size(), -7.0f);
  const int n_heads = c.n_kv_heads * c.group;
  paged_attention(pool, f.kv, kSeq, 1, {n_heads, c.n_kv_heads, c.head_dim, c.softcap},
                  c.length - c.n_query, c.n_query, q, out, math);
  return out;
}

// reference_attention, query by query (in double; returned as float).
std::vector<double> reference(const Case& c, const Fixture& f, const std::vector<float>& q) {
  const int n_heads = c.n_kv_heads * c.group, q_dim = n_heads * c.head_dim;
  std::vector<float> out(q.size());
  for (int t = 0; t < c.n_query; ++t) {
    reference_attention(f.kv, kSeq, 1, {n_heads, c.n_kv_heads, c.head_dim, c.softcap},
                        c.length - c.n_query + t,
                        std::span<const float>(q).subspan(t * q_dim, q_dim),
                        std::span<float>(out).subspan(t * q_dim, q_dim));
  }
  return {out.begin(), out.end()};
}

std::vector<float> queries(const Case& c) {
  return random_floats(static_cast<std::size_t>(c.n_query * c.n_kv_heads * c.group * c.head_dim), 5,
                       3.0f);
}

void expect_bits_equal(const std::vector<float>& got, const std::vector<float>& want,
                       const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], 4), 0)
        << what << ": value " << i << " is " << got[i] << ", llama.cpp's kernel gives " << want[i];
  }
}

// The reference reads what the cache holds through the formats' decoders; the derivation
// above quantizes the raw keys and values again. Every format, windows and exact tails.
TEST(ReferenceAttention, IsExactAttentionOverTheValuesTheCacheStores) {
  for (const KvDtype dtype : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    for (const int block_size : {1, 7, 16}) {
      for (const int window : {0, 20}) {
        for (const int tail : {0, 2}) {
          if (tail > 0 && dtype == KvDtype::F16) continue;  // fp16 keeps no exact tail
          Case c;
          c.softcap = window > 0 ? 1.5f : 0.0f;
          c.dtype = dtype;
          c.head_dim = 40;
          c.block_size = block_size;
          c.length = 3 * block_size + 31;
          c.group = 3;
          c.n_query = 4;
          c.window = window;
          c.exact_tail = tail;
          const Fixture f(c);
          const auto q = queries(c);
          const auto got = reference(c, f, q);
          const auto want = expected_exact(c, f, q);
          for (std::size_t i = 0; i < got.size(); ++i) {
            // the reference rounds its double result to float
            EXPECT_NEAR(got[i], want[i], 1e-6 * (1 + std::abs(want[i]))) << c.name() << " " << i;
          }
        }
      }
    }
  }
}

TEST(ReferenceAttention, OneVisibleKeyGivesItsValue) {
  Case c;
  c.dtype = KvDtype::Int8;
  c.length = 30;
  c.window = 1;  // each query sees only itself
  const Fixture f(c);
  const auto q = queries(c);
  const auto got = reference(c, f, q);
  const int hd = c.head_dim, kv_dim = c.n_kv_heads * hd;
  std::vector<std::uint8_t> data(static_cast<std::size_t>(kv_data_bytes_per_vector(c.dtype, hd)));
  std::vector<std::uint16_t> scales(static_cast<std::size_t>(kv_scales_per_vector(c.dtype, hd)));
  std::vector<float> v(static_cast<std::size_t>(hd));
  for (int h = 0; h < c.n_kv_heads * c.group; ++h) {
    const int g = h / c.group;
    kv_quantize(c.dtype, &f.v[(c.length - 1) * kv_dim + g * hd], hd, data.data(), scales.data());
    kv_dequantize(c.dtype, data.data(), scales.data(), hd, v.data());
    for (int i = 0; i < hd; ++i) EXPECT_EQ(got[h * hd + i], v[i]) << "head " << h << " " << i;
  }
}

TEST(CpuAttention, F16CacheIsLlamaCppFlashAttentionWhateverTheBlocks) {
  for (const int head_dim : {8, 40, 64}) {
    for (const int block_size : {1, 5, 16, 64}) {
      for (const int group : {1, 2, 4}) {
        Case c;
        c.head_dim = head_dim;
        c.block_size = block_size;
        c.group = group;
        c.length = 2 * block_size + 19;
        c.n_query = 3;  // a prompt chunk: each token sees its own prefix
        c.threads = 2;
        const Fixture f(c);
        const auto q = queries(c);
        expect_bits_equal(run(c, f, q), expected_f16(c, f, q), c.name());
      }
    }
  }
}

// Decoding one token has few (token, KV head) items, so the heads of a group are split over
// the threads; a head's result must not depend on how its group was split.
TEST(CpuAttention, SplittingAGroupsHeadsOverThreadsChangesNoBit) {
  for (const KvDtype dtype : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    Case c;
    c.dtype = dtype;
    c.head_dim = 64;
    c.n_kv_heads = 1;
    c.group = 6;
    c.length = 70;
    c.n_query = 1;
    const Fixture f(c);
    const auto q = queries(c);
    c.threads = 1;  // two parts of 3 heads
    const auto two_parts = run(c, f, q);
    c.threads = 3;  // six parts of 1 head
    expect_bits_equal(run(c, f, q), two_parts, c.name());
    if (dtype == KvDtype::F16) expect_bits_equal(two_parts, expected_f16(c, f, q), c.name());
  }
}

TEST(CpuAttention, F16CacheStaysCloseToExactAttention) {
  Case c;
  c.head_dim = 64;
  c.length = 150;
  c.n_query = 2;
  const Fixture f(c);
  const auto q = queries(c);
  const auto got = run(c, f, q);
  const auto want = reference(c, f, q);
  // the fp16 accumulator costs precision (about 1e-3 here), not correctness
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 5e-3) << i;
}

TEST(CpuAttention, QuantizedCacheIsFloatAttentionOverTheStoredValues) {
  for (const KvDtype dtype : {KvDtype::Int8, KvDtype::Int4}) {
    for (const int block_size : {1, 7, 16}) {
      Case c;
      c.dtype = dtype;
      c.head_dim = 40;
      c.block_size = block_size;
      c.length = 3 * block_size + 11;
      c.group = 3;
      c.n_query = 4;
      const Fixture f(c);
      const auto q = queries(c);
      const auto got = run(c, f, q);
      const auto want = reference(c, f, q);
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-4 * std::abs(want[i])) << c.name() << " " << i;
      }
    }
  }
}

TEST(CpuAttention, ExactTailBlocksAreReadFromTheirFp16Copies) {
  for (const KvDtype dtype : {KvDtype::Int8, KvDtype::Int4}) {
    for (const int tail : {1, 2}) {
      for (const int block_size : {1, 7, 16}) {
        Case c;
        c.dtype = dtype;
        c.exact_tail = tail;
        c.head_dim = 40;
        c.block_size = block_size;
        c.length = 4 * block_size + 11;
        c.group = 3;
        c.n_query = block_size + 3;  // queries across a block boundary read both kinds
        const Fixture f(c);
        const auto q = queries(c);
        const auto got = run(c, f, q);
        const auto want = reference(c, f, q);
        for (std::size_t i = 0; i < got.size(); ++i) {
          ASSERT_NEAR(got[i], want[i], 1e-5 + 1e-4 * std::abs(want[i])) << c.name() << " " << i;
        }
      }
    }
  }
}

TEST(CpuAttention, AnExactTailBringsInt4CloserToTheFp16Cache) {
  Case c;
  c.head_dim = 64;
  c.length = 64;  // 4 blocks; the queries in the last read the last two exactly
  c.n_query = 8;
  c.dtype = KvDtype::F16;
  const auto q = queries(c);
  const auto reference = run(c, Fixture(c), q, AttentionMath::Float);
  const auto error = [&](const Case& with) {
    const auto got = run(with, Fixture(with), q, AttentionMath::Float);
    double e = 0;
    for (std::size_t i = 0; i < got.size(); ++i) e += std::abs(double{got[i]} - reference[i]);
    return e;
  };
  c.dtype = KvDtype::Int4;
  const double plain = error(c);
  c.exact_tail = 2;
  const double tail = error(c);
  // random keys weigh every position alike, so about half the error is left (a model's
  // attention, weighing recent tokens most, gains more)
  EXPECT_LT(tail, 0.7 * plain) << "int4 error with the tail " << tail << ", without " << plain;
}

TEST(CpuAttention, SlidingWindowReadsOnlyTheVisibleKeys) {
  for (const KvDtype dtype : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    Case c;
    c.dtype = dtype;
    c.block_size = 4;
    c.length = 60;
    c.window = 13;
    c.n_query = 1;
    const Fixture f(c);
    const auto q = queries(c);
    const auto got = run(c, f, q);
    if (dtype == KvDtype::F16) {
      expect_bits_equal(got, expected_f16(c, f, q), c.name());
    } else {
      const auto want = reference(c, f, q);
      for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
    }
  }
}

void expect_near_exact(const std::vector<float>& got, const std::vector<double>& want,
                       const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 2e-6 + 2e-5 * std::abs(want[i])) << what << " value " << i;
  }
}

// Float math: exact attention to float precision on every cache dtype, block size, head_dim
// (36 is padded to 40 lanes), window, and contexts of several 128-position chunks.
TEST(CpuAttention, FloatMathIsExactAttentionToFloatPrecision) {
  for (const KvDtype dtype : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    for (const int head_dim : {8, 36, 64}) {
      for (const int block_size : {1, 5, 16, 64}) {
        for (const int window : {0, 150}) {
          Case c;
          c.dtype = dtype;
          c.head_dim = head_dim;
          c.block_size = block_size;
          c.group = 3;
          c.window = window;
          c.length = 300 + block_size;
          c.n_query = window > 0 ? 1 : 2;  // the fixture frees blocks out of the last window
          c.threads = 2;
          const Fixture f(c);
          const auto q = queries(c);
          expect_near_exact(run(c, f, q, AttentionMath::Float), reference(c, f, q), c.name());
        }
      }
    }
  }
}

// Float math cuts a decoded token's context into chunks that any thread may take, and a
// prompt's tokens into tiles that share each block's decoding: neither the thread count (which
// sets the tile size) nor whether a token came alone or in a prompt chunk may change a bit.
TEST(CpuAttention, FloatMathGivesTheSameBitsWhateverTheThreadsAndTheBatch) {
  for (const int variant : {0, 1, 2}) {  // f16, int4, int4 with an exact tail of 2 blocks
    Case c;
    c.dtype = variant == 0 ? KvDtype::F16 : KvDtype::Int4;
    c.exact_tail = variant == 2 ? 2 : 0;
    c.head_dim = 64;
    c.n_kv_heads = 3;
    c.group = 3;
    c.length = 700;
    c.n_query = 37;  // tiles of 8 tokens with 1-3 threads, of 3 with 8
    const Fixture f(c);
    const auto q = queries(c);
    c.threads = 1;
    const auto reference = run(c, f, q, AttentionMath::Float);
    for (const int threads : {2, 3, 8}) {
      c.threads = threads;
      expect_bits_equal(run(c, f, q, AttentionMath::Float), reference,
                        c.name() + " threads " + std::to_string(threads));
    }
    // the last token alone (split into chunks) against its row of the prompt run
    const std::size_t q_dim = static_cast<std::size_t>(c.n_kv_heads * c.group * c.head_dim);
    const std::vector<float> last_q(q.end() - static_cast<std::ptrdiff_t>(q_dim), q.end());
    const std::vector<float> last(reference.end() - static_cast<std::ptrdiff_t>(q_dim),
                                  reference.end());
    c.n_query = 1;
    for (const int threads : {1, 2, 5}) {
      c.threads = threads;
      expect_bits_equal(run(c, f, last_q, AttentionMath::Float), last,
                        c.name() + " alone, threads " + std::to_string(threads));
    }
  }
}

TEST(CpuAttention, FloatMathPortableAndAvx2GiveTheSameBits) {
  if (!cpu_has_avx2_fma_f16c()) GTEST_SKIP() << "this CPU has no AVX2 + FMA + F16C";
  for (const KvDtype dtype : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    Case c;
    c.dtype = dtype;
    c.head_dim = 72;
    c.block_size = 7;
    c.length = 400;
    c.n_query = 3;
    c.threads = 1;  // the calling thread runs every item, inside the scope below
    const Fixture f(c);
    const auto q = queries(c);
    const auto simd = run(c, f, q, AttentionMath::Float);
    const PortableArithmeticScope portable;
    expect_bits_equal(run(c, f, q, AttentionMath::Float), simd, c.name());
  }
}

// Soft-capped scores (Gemma 2) in every path: llama.cpp's fp16 kernel bit for bit on an fp16
// cache (its AVX2 head_dim 8 and general versions, and the portable one), float math on every
// dtype against the reference, prompt tiles and a decoded token's chunks alike. The cap of 1.5
// bends these scores (up to about 10) hard, so a path that skips it fails by far more than the
// tolerance: that is checked too.
TEST(CpuAttention, SoftCappedScoresInEveryPath) {
  for (const KvDtype dtype : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    for (const int head_dim : {8, 64}) {
      for (const int n_query : {1, 5}) {
        Case c;
        c.dtype = dtype;
        c.head_dim = head_dim;
        c.block_size = 7;
        c.group = 3;
        c.length = 300;
        c.n_query = n_query;
        c.threads = 2;
        c.softcap = 1.5f;
        const Fixture f(c);
        const auto q = queries(c);
        const auto want = reference(c, f, q);
        expect_near_exact(run(c, f, q, AttentionMath::Float), want, c.name() + " float");
        if (dtype == KvDtype::F16) {
          const auto ggml = run(c, f, q, AttentionMath::GgmlOrder);
          expect_bits_equal(ggml, expected_f16(c, f, q), c.name());
          if (cpu_has_avx2_fma_f16c()) {
            const PortableArithmeticScope portable;
            c.threads = 1;  // the calling thread runs every item, inside the scope
            expect_bits_equal(run(c, f, q, AttentionMath::GgmlOrder), ggml, c.name() + " portable");
            c.threads = 2;
          }
        }
        Case uncapped = c;
        uncapped.softcap = 0.0f;
        const auto plain = run(uncapped, f, q, AttentionMath::Float);
        double moved = 0;
        for (std::size_t i = 0; i < plain.size(); ++i)
          moved = std::max(moved, std::abs(plain[i] - want[i]));
        EXPECT_GT(moved, 0.05) << c.name() << ": the cap changes little here";
      }
    }
  }
}

TEST(CpuAttention, FloatMathPortableAndAvx2GiveTheSameBitsWithASoftCap) {
  if (!cpu_has_avx2_fma_f16c()) GTEST_SKIP() << "this CPU has no AVX2 + FMA + F16C";
  Case c;
  c.dtype = KvDtype::Int4;
  c.head_dim = 64;
  c.block_size = 7;
  c.length = 200;
  c.n_query = 3;
  c.threads = 1;
  c.softcap = 1.5f;
  const Fixture f(c);
  const auto q = queries(c);
  const auto simd = run(c, f, q, AttentionMath::Float);
  const PortableArithmeticScope portable;
  expect_bits_equal(run(c, f, q, AttentionMath::Float), simd, c.name());
}

TEST(CpuAttention, RejectsBuffersOfTheWrongSize) {
  Case c;
  const Fixture f(c);
  ThreadPool pool(1);
  std::vector<float> q(4 * 8), out(4 * 8 - 1);
  EXPECT_THROW(paged_attention(pool, f.kv, kSeq, 1, {4, 2, 8}, c.length - 1, 1, q, out),
               UsageError);
}

}  // namespace
}  // namespace kvscope
