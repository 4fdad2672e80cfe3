// ggml_flash_attn: llama.cpp's CPU flash attention over fp16 K/V, bit for bit. The expected
// bits were computed by ggml_flash_attn_ext itself (llama.cpp's ggml-cpu, GCC, AVX-512) on
// the same generated inputs: 4 query heads over 2 KV heads, 37 keys, one query token.
#include "cpu/attention/ggml_flash_attn.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/simd_dispatch.h"
#include "golden_inputs.h"
#include "util/half.h"

namespace kvscope {
namespace {

using test::bits;
using test::fnv;
using test::Lcg;

// q: [n_heads][hd]; k, v: [n_kv_heads][n_keys][hd] fp16. Feeds the keys in runs of `run`
// keys (as the paged attention feeds one block at a time). out: [n_heads][hd].
std::vector<float> attend(const std::vector<float>& q, const std::vector<std::uint16_t>& k,
                          const std::vector<std::uint16_t>& v, int hd, int n_heads, int n_kv_heads,
                          int n_keys, int run) {
  const int group = n_heads / n_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> out(q.size());
  std::vector<std::uint16_t> q16(group * hd), acc(group * hd);
  std::vector<GgmlFlashHead> st(group);
  for (int g = 0; g < n_kv_heads; ++g) {
    for (int h = 0; h < group; ++h) {
      ggml_flash_begin(&q[(g * group + h) * hd], hd, &q16[h * hd], &acc[h * hd], st[h]);
    }
    for (int k0 = 0; k0 < n_keys; k0 += run) {
      const int n = std::min(run, n_keys - k0);
      const std::size_t at = (static_cast<std::size_t>(g) * n_keys + k0) * hd;
      ggml_flash_keys(&k[at], &v[at], hd, n, hd, scale, q16.data(), acc.data(), st.data(), group);
    }
    for (int h = 0; h < group; ++h)
      ggml_flash_end(&acc[h * hd], st[h], hd, &out[(g * group + h) * hd]);
  }
  return out;
}

struct Inputs {
  std::vector<float> q;
  std::vector<std::uint16_t> k, v;
};

// The inputs of the golden run: q in [-3, 3), K in [-1.5, 1.5), V in [-1, 1) as fp16.
Inputs golden_inputs(int hd, int n_heads, int n_kv_heads, int n_keys) {
  Lcg g(5000 + hd);
  Inputs in;
  in.q.resize(hd * n_heads);
  for (float& f : in.q) f = g.next(6.0f);
  in.k.resize(static_cast<std::size_t>(hd) * n_keys * n_kv_heads);
  in.v.resize(in.k.size());
  for (auto& h : in.k) h = float_to_fp16(g.next(3.0f));
  for (auto& h : in.v) h = float_to_fp16(g.next(2.0f));
  return in;
}

TEST(GgmlFlashAttn, IsGgmlFlashAttnExtBitForBit) {
  const struct {
    int hd;
    std::uint64_t fnv;
    std::uint32_t first, last;
  } cases[] = {{8, 0xeed4298ec6bafd2dull, 0x3d75988d, 0xbe24b479},
               {64, 0x27ae0cc3984e34d0ull, 0x3ef42ff5, 0x3e802584}};
  for (const auto& c : cases) {
    const Inputs in = golden_inputs(c.hd, 4, 2, 37);
    for (const int run : {37, 16, 5, 1}) {  // how the keys are split must not matter
      for (const bool portable : {false, true}) {
        std::vector<float> out;
        if (portable) {
          PortableArithmeticScope scope;
          out = attend(in.q, in.k, in.v, c.hd, 4, 2, 37, run);
        } else {
          out = attend(in.q, in.k, in.v, c.hd, 4, 2, 37, run);
        }
        const std::string what = "head_dim " + std::to_string(c.hd) + " runs of " +
                                 std::to_string(run) + (portable ? " portable" : "");
        EXPECT_EQ(bits(out.front()), c.first) << what;
        EXPECT_EQ(bits(out.back()), c.last) << what;
        EXPECT_EQ(fnv(out), c.fnv) << what;
      }
    }
  }
}

TEST(GgmlFlashAttn, StaysCloseToExactSoftmaxAttention) {
  // the fp16 accumulator costs precision, not correctness: within 5e-3 of double attention
  // (up to 2e-3 seen)
  for (const int hd : {8, 40, 72, 128}) {
    const Inputs in = golden_inputs(hd, 6, 3, 90);
    const auto out = attend(in.q, in.k, in.v, hd, 6, 3, 90, 16);
    for (int h = 0; h < 6; ++h) {
      const int g = h / 2;
      std::vector<double> s(90);
      double mx = -1e300, sum = 0;
      for (int j = 0; j < 90; ++j) {
        double d = 0;
        for (int i = 0; i < hd; ++i) {
          d += static_cast<double>(in.q[h * hd + i]) * fp16_to_float(in.k[(g * 90 + j) * hd + i]);
        }
        s[j] = d / std::sqrt(static_cast<double>(hd));
        mx = std::max(mx, s[j]);
      }
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (int i = 0; i < hd; ++i) {
        double want = 0;
        for (int j = 0; j < 90; ++j) want += s[j] * fp16_to_float(in.v[(g * 90 + j) * hd + i]);
        EXPECT_NEAR(out[h * hd + i], want / sum, 5e-3) << "head_dim " << hd << " head " << h;
      }
    }
  }
}

TEST(GgmlFlashAttn, NoKeysGivesZeros) {
  std::vector<float> q(8, 1.0f), out(8, 5.0f);
  std::vector<std::uint16_t> q16(8), acc(8);
  GgmlFlashHead st;
  ggml_flash_begin(q.data(), 8, q16.data(), acc.data(), st);
  ggml_flash_end(acc.data(), st, 8, out.data());
  for (const float f : out) EXPECT_EQ(f, 0.0f);
}

TEST(GgmlFlashAttn, DotF16SumsProductsInDoubleBeyondTheVectorPart) {
  // 1 + 2^-30 needs the double sum: float would drop the small product
  std::vector<std::uint16_t> k(72, 0), q(72, 0);
  k[64] = float_to_fp16(1.0f), q[64] = float_to_fp16(1.0f);
  k[65] = float_to_fp16(0x1p-15f), q[65] = float_to_fp16(0x1p-15f);
  k[66] = float_to_fp16(-1.0f), q[66] = float_to_fp16(1.0f);
  EXPECT_EQ(ggml_dot_f16(k.data(), q.data(), 72), 0x1p-30f);
  PortableArithmeticScope portable;
  EXPECT_EQ(ggml_dot_f16(k.data(), q.data(), 72), 0x1p-30f);
}

}  // namespace
}  // namespace kvscope
