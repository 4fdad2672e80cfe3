// Writing tokens into blocks (kv_slot_writer.h, through KvCacheManager::write_token) with
// int4 keys: a block's slot 0 sets its K offsets, every key is stored against them, the
// error is measured through them, and copy-on-write carries them with the block.
#include "kv/format/kv_slot_writer.h"

#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kv/format/kv_format.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_cache_observer.h"
#include "util/half.h"

namespace kvscope {
namespace {

constexpr std::int64_t kHeads = 2;
constexpr std::int64_t kDim = 8;
constexpr std::int64_t kBlock = 4;

// 2 layers, int4 K and the given V dtype, blocks of 4 slots.
KvCacheConfig int4_config(KvDtype v_dtype = KvDtype::Int4) {
  KvCacheConfig c;
  c.groups = uniform_layer_groups(2, KvDtype::Int4);
  c.groups[0].v_dtype = v_dtype;
  c.n_kv_heads = kHeads;
  c.head_dim = kDim;
  c.block_size = kBlock;
  c.max_context = 100;
  c.n_blocks = 8;
  return c;
}

// [n_tokens][kHeads][kDim] keys with per-channel offsets, as RoPE'd keys have.
std::vector<float> keys(std::int64_t n_tokens, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(n_tokens * kHeads * kDim));
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = 3.0f * static_cast<float>(i % (kHeads * kDim)) - 20.0f + normal(rng);
  }
  return x;
}

const float* token(const std::vector<float>& x, std::int64_t pos) {
  return x.data() + pos * kHeads * kDim;
}

// The key of (layer, head) at pos as the cache holds it.
std::vector<float> stored_key(const KvCacheManager& m, SeqId seq, std::int64_t layer,
                              std::int64_t head, std::int64_t pos) {
  const KvBlockLayout& l = m.layout(0);
  const KvSlot s = m.slot(seq, 0, pos);
  const std::uint8_t* base = m.bytes().block_data(0, s.block);
  std::vector<float> out(kDim);
  kv_k4_dequantize(l.data(base, KvSide::K, layer, head, s.slot),
                   l.scales(base, KvSide::K, layer, head, s.slot), l.k_offsets(base, layer, head),
                   kDim, out.data());
  return out;
}

TEST(KvSlotWriter, SlotZeroSetsTheBlocksOffsetsAndEveryKeyIsStoredAgainstThem) {
  KvCacheManager m(int4_config());
  m.add_sequence(1);
  const std::int64_t n = 10;  // blocks of 4: slots 0 at positions 0, 4, 8
  const auto k = keys(n, 1), v = keys(n, 2);
  m.grow(1, n);
  for (std::int64_t pos = 0; pos < n; ++pos)
    m.bytes().write_token(1, 1, pos, token(k, pos), token(v, pos));
  const KvBlockLayout& l = m.layout(0);
  for (std::int64_t pos = 0; pos < n; ++pos) {
    const std::int64_t first = pos / kBlock * kBlock;
    const std::uint8_t* base = m.bytes().block_data(0, m.slot(1, 0, pos).block);
    for (std::int64_t h = 0; h < kHeads; ++h) {
      const float* x = token(k, pos) + h * kDim;
      for (std::int64_t i = 0; i < kDim; ++i) {
        EXPECT_EQ(l.k_offsets(base, 1, h)[i], float_to_fp16(token(k, first)[h * kDim + i]));
      }
      std::vector<std::uint8_t> data(4);
      std::vector<std::uint16_t> scales(4);
      kv_k4_quantize(x, l.k_offsets(base, 1, h), kDim, data.data(), scales.data());
      const KvSlot s = m.slot(1, 0, pos);
      EXPECT_EQ(0, std::memcmp(data.data(), l.data(base, KvSide::K, 1, h, s.slot), 4)) << pos;
      EXPECT_EQ(0, std::memcmp(scales.data(), l.scales(base, KvSide::K, 1, h, s.slot), 8)) << pos;
      // the keys are close; slot 0's nearly exact
      const std::vector<float> y = stored_key(m, 1, 1, h, pos);
      for (std::int64_t i = 0; i < kDim; ++i) {
        EXPECT_NEAR(y[static_cast<std::size_t>(i)], x[i], pos == first ? 0.02 : 0.5) << pos;
      }
    }
  }
}

TEST(KvSlotWriter, MeasuredKeyErrorIsTheErrorOfTheStoredOffsetInt4Key) {
  KvCacheManager m(int4_config(KvDtype::F16));
  KvCacheObserver observer(m.config());
  m.set_observer(&observer);
  m.add_sequence(1);
  const auto k = keys(6, 3), v = keys(6, 4);
  m.grow(1, 6);
  double want = 0, exact = 0;
  for (std::int64_t pos = 0; pos < 6; ++pos) {
    m.bytes().write_token(1, 0, pos, token(k, pos), token(v, pos), /*measure_error=*/true);
    for (std::int64_t h = 0; h < kHeads; ++h) {
      const std::vector<float> y = stored_key(m, 1, 0, h, pos);
      for (std::int64_t i = 0; i < kDim; ++i) {
        const double x = token(k, pos)[h * kDim + i];
        want += (x - y[static_cast<std::size_t>(i)]) * (x - y[static_cast<std::size_t>(i)]);
        exact += x * x;
      }
    }
  }
  EXPECT_EQ(observer.quant_error_k(0).count, 6 * kHeads * kDim);
  EXPECT_NEAR(observer.quant_error_k(0).sq_error, want, 1e-9 * exact);
  EXPECT_GT(observer.quant_error_k(0).sq_error, 0.0);
  EXPECT_NEAR(observer.quant_error_k(0).sq_exact, exact, 1e-9 * exact);
  // f16 values: the V error is only fp16 rounding
  EXPECT_LT(observer.quant_error_v(0).relative_rms_error(), 1e-3);
  EXPECT_LT(observer.quant_error_v(0).relative_rms_error(),
            observer.quant_error_k(0).relative_rms_error());
}

TEST(KvSlotWriter, CopyOnWriteCarriesTheOffsetsSoTheChildReadsTheSameKeys) {
  KvCacheManager m(int4_config());
  m.add_sequence(1);
  const auto k = keys(7, 5), v = keys(7, 6);
  m.grow(1, 6);  // block 1 holds positions 4, 5: a shared partial tail after the fork
  for (std::int64_t pos = 0; pos < 6; ++pos) {
    for (std::int64_t layer = 0; layer < 2; ++layer) {
      m.bytes().write_token(1, layer, pos, token(k, pos), token(v, pos));
    }
  }
  m.fork(1, 2);
  m.grow(2, 1);  // copies the tail
  ASSERT_NE(m.slot(1, 0, 5).block, m.slot(2, 0, 5).block);
  for (std::int64_t layer = 0; layer < 2; ++layer) {
    m.bytes().write_token(2, layer, 6, token(k, 6), token(v, 6));
  }
  for (std::int64_t pos = 0; pos < 6; ++pos) {
    for (std::int64_t h = 0; h < kHeads; ++h) {
      EXPECT_EQ(stored_key(m, 1, 1, h, pos), stored_key(m, 2, 1, h, pos)) << pos;
    }
  }
  // the child's new key is stored against the copied offsets of position 4's key
  const std::vector<float> y = stored_key(m, 2, 1, 0, 6);
  for (std::int64_t i = 0; i < kDim; ++i) {
    EXPECT_NEAR(y[static_cast<std::size_t>(i)], token(k, 6)[i], 0.5) << i;
  }
}

TEST(KvSlotWriter, WriteSlotWithoutAManagerWritesTheSameBytes) {
  const KvBlockLayout l = KvBlockLayout::make(KvDtype::Int4, KvDtype::Int8, 1, kHeads, kDim, 2);
  std::vector<std::uint16_t> a(static_cast<std::size_t>(l.block_bytes() / 2), 0);
  std::vector<std::uint16_t> b(a.size(), 0xffff);  // stale bytes everywhere
  const auto k = keys(2, 7), v = keys(2, 8);
  for (auto* block : {a.data(), b.data()}) {
    auto* base = reinterpret_cast<std::uint8_t*>(block);
    kv_write_slot(l, base, 0, 0, token(k, 0), token(v, 0));
    kv_write_slot(l, base, 0, 1, token(k, 1), token(v, 1));
  }
  EXPECT_EQ(a, b);  // every byte of the block is written, none left from before
  const QuantErrorSums e = kv_slot_quant_error(
      l, KvSide::K, reinterpret_cast<const std::uint8_t*>(a.data()), 0, 1, token(k, 1));
  EXPECT_EQ(e.count, kHeads * kDim);
  EXPECT_GT(e.sq_error, 0.0);
  EXPECT_LT(e.relative_rms_error(), 0.05);
}

}  // namespace
}  // namespace kvscope
