#include "kv/format/kv_block_layout.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "util/error.h"

namespace kvscope {
namespace {

constexpr KvDtype kAllDtypes[] = {KvDtype::F16, KvDtype::Int8, KvDtype::Int4};

TEST(KvBlockLayout, BlockBytesAreLayersTimesThePerBlockBytesFunction) {
  for (const KvDtype k : kAllDtypes) {
    for (const KvDtype v : kAllDtypes) {
      for (const std::int64_t hd : {1, 7, 8, 40, 72, 128}) {
        for (const std::int64_t bs : {1, 3, 16}) {
          const KvBlockLayout l = KvBlockLayout::make(k, v, 5, 4, hd, bs);
          const std::int64_t per_layer = kv_bytes_per_block_per_layer(k, v, 4, hd, bs);
          EXPECT_EQ(l.layer_bytes(), per_layer)
              << kv_dtype_name(k) << "/" << kv_dtype_name(v) << " hd " << hd << " bs " << bs;
          EXPECT_EQ(l.block_bytes(), 5 * per_layer);
          // the vectors of every slot, plus the int4 K offsets once per block and layer
          EXPECT_EQ(per_layer, bs * kv_slot_bytes_per_layer(k, v, 4, hd) +
                                   (k == KvDtype::Int4 ? 4 * hd * 2 : 0));
        }
      }
    }
  }
  // stories260K in int4, blocks of 16: 19 B per token and KV head
  EXPECT_EQ(KvBlockLayout::make(KvDtype::Int4, KvDtype::Int4, 5, 4, 8, 16).block_bytes(),
            5 * 16 * 4 * 19);
}

TEST(KvBlockLayout, OffsetsOfASmallInt8BlockAreTheDocumentedOnes) {
  // 2 layers, 2 heads, head_dim 40 (2 groups), block_size 3.
  const KvBlockLayout l = KvBlockLayout::make(KvDtype::Int8, KvDtype::Int8, 2, 2, 40, 3);
  // Per layer: K data 2*3*40 = 240, K scales 2*3*2*2 = 24, V data 240, V scales 24.
  EXPECT_EQ(l.layer_bytes(), 528);
  EXPECT_EQ(l.data_offset(KvSide::K, 0, 0, 0), 0);
  EXPECT_EQ(l.data_offset(KvSide::K, 0, 0, 2), 80);
  EXPECT_EQ(l.data_offset(KvSide::K, 0, 1, 0), 120);
  EXPECT_EQ(l.scales_offset(KvSide::K, 0, 0, 0), 240);
  EXPECT_EQ(l.scales_offset(KvSide::K, 0, 1, 1), 240 + 4 * 4);
  EXPECT_EQ(l.data_offset(KvSide::V, 0, 0, 0), 264);
  EXPECT_EQ(l.scales_offset(KvSide::V, 0, 0, 0), 504);
  EXPECT_EQ(l.data_offset(KvSide::K, 1, 0, 0), 528);
  EXPECT_EQ(l.scales_offset(KvSide::V, 1, 1, 2), 528 + 504 + 5 * 4);
}

TEST(KvBlockLayout, Int4KeysPutTheirOffsetsAfterTheVScales) {
  // 2 layers, 2 heads, head_dim 40 (K groups 16 + 16 + 8, V groups 32 + 8), block_size 3.
  const KvBlockLayout l = KvBlockLayout::make(KvDtype::Int4, KvDtype::Int8, 2, 2, 40, 3);
  EXPECT_EQ(l.data_stride(KvSide::K), 20);
  EXPECT_EQ(l.scales_per_vector(KvSide::K), 6);  // (s, m) x 3 groups
  EXPECT_EQ(l.scales_per_vector(KvSide::V), 2);
  // Per layer: K data 2*3*20 = 120, K scales 2*3*6*2 = 72, V data 2*3*40 = 240,
  // V scales 2*3*2*2 = 24, K offsets 2*40*2 = 160.
  EXPECT_EQ(l.layer_bytes(), 616);
  EXPECT_EQ(l.scales_offset(KvSide::K, 0, 0, 0), 120);
  EXPECT_EQ(l.scales_offset(KvSide::K, 0, 1, 2), 120 + 5 * 12);
  EXPECT_EQ(l.data_offset(KvSide::V, 0, 0, 0), 192);
  EXPECT_EQ(l.scales_offset(KvSide::V, 0, 0, 0), 432);
  EXPECT_EQ(l.k_offsets_offset(0, 0), 456);
  EXPECT_EQ(l.k_offsets_offset(0, 1), 456 + 80);
  EXPECT_EQ(l.k_offsets_offset(1, 1), 616 + 456 + 80);
  EXPECT_EQ(l.block_bytes(), 2 * 616);
}

// Marks every byte each (layer, side, head, slot) vector and each (layer, head) set of int4
// K offsets owns: every byte of the block is owned exactly once, so sections neither
// overlap nor leave gaps.
TEST(KvBlockLayout, VectorsTileTheBlockExactlyOnceWithAlignedScales) {
  for (const KvDtype k : kAllDtypes) {
    for (const KvDtype v : kAllDtypes) {
      for (const std::int64_t hd : {3, 8, 40}) {
        const KvBlockLayout l = KvBlockLayout::make(k, v, 3, 2, hd, 5);
        std::vector<int> owners(static_cast<std::size_t>(l.block_bytes()), 0);
        for (std::int64_t layer = 0; layer < 3; ++layer) {
          for (const KvSide side : {KvSide::K, KvSide::V}) {
            for (std::int64_t h = 0; h < 2; ++h) {
              for (std::int64_t s = 0; s < 5; ++s) {
                const std::int64_t d = l.data_offset(side, layer, h, s);
                for (std::int64_t b = 0; b < l.data_stride(side); ++b)
                  ++owners[static_cast<std::size_t>(d + b)];
                const std::int64_t sc = l.scales_offset(side, layer, h, s);
                EXPECT_EQ(sc % 2, 0);
                EXPECT_EQ(d % 2, 0);
                for (std::int64_t b = 0; b < 2 * l.scales_per_vector(side); ++b) {
                  ++owners[static_cast<std::size_t>(sc + b)];
                }
              }
            }
          }
          if (k != KvDtype::Int4) continue;
          for (std::int64_t h = 0; h < 2; ++h) {  // the block's K offsets of (layer, head)
            const std::int64_t o = l.k_offsets_offset(layer, h);
            EXPECT_EQ(o % 2, 0);
            for (std::int64_t b = 0; b < 2 * hd; ++b) ++owners[static_cast<std::size_t>(o + b)];
          }
        }
        for (std::size_t i = 0; i < owners.size(); ++i) {
          ASSERT_EQ(owners[i], 1) << "byte " << i << " of " << kv_dtype_name(k) << "/"
                                  << kv_dtype_name(v) << " hd " << hd;
        }
      }
    }
  }
}

TEST(KvBlockLayout, PointersAreBasePlusOffsets) {
  const KvBlockLayout l = KvBlockLayout::make(KvDtype::Int4, KvDtype::F16, 2, 4, 8, 16);
  std::vector<std::uint16_t> block(static_cast<std::size_t>(l.block_bytes() / 2));
  auto* base = reinterpret_cast<std::uint8_t*>(block.data());
  EXPECT_EQ(l.data(base, KvSide::V, 1, 3, 15), base + l.data_offset(KvSide::V, 1, 3, 15));
  EXPECT_EQ(reinterpret_cast<std::uint8_t*>(l.scales(base, KvSide::K, 1, 2, 7)),
            base + l.scales_offset(KvSide::K, 1, 2, 7));
  EXPECT_EQ(reinterpret_cast<std::uint8_t*>(l.k_offsets(base, 1, 3)),
            base + l.k_offsets_offset(1, 3));
  EXPECT_EQ(l.dtype(KvSide::K), KvDtype::Int4);
  EXPECT_EQ(l.dtype(KvSide::V), KvDtype::F16);
  EXPECT_EQ(l.scales_per_vector(KvSide::V), 0);
}

TEST(KvBlockLayout, RejectsEmptyOrAbsurdShapes) {
  EXPECT_THROW(KvBlockLayout::make(KvDtype::F16, KvDtype::F16, 1, 1, 8, 0), UsageError);
  EXPECT_THROW(KvBlockLayout::make(KvDtype::F16, KvDtype::F16, 0, 1, 8, 16), UsageError);
  EXPECT_THROW(KvBlockLayout::make(KvDtype::F16, KvDtype::F16, 1, 0, 8, 16), UsageError);
  EXPECT_THROW(KvBlockLayout::make(KvDtype::F16, KvDtype::F16, 1, 1, 0, 16), UsageError);
  // 2^20 slots x 2^16 layers x 16 KiB per token is far past 1 TiB.
  EXPECT_THROW(KvBlockLayout::make(KvDtype::F16, KvDtype::F16, 1 << 16, 32, 128, 1 << 20),
               UsageError);
}

}  // namespace
}  // namespace kvscope
