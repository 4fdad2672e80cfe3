// The KV byte contract between the cache manager and a device backend, on the host. A CUDA
// backend keeps the bytes itself (host_storage = false): before each step it applies the
// copy-on-write copies the manager reported, in their order, then its append kernel writes
// each token's K and V at the slot the step's packed tables give (plan_step: blocks
// [table_start[t] + pos / block_size], slot pos % block_size, as kv_append.cu reads them).
// Here a shadow pool plays the device: the reported copies are replayed onto it and the
// tokens are written through the CPU's own slot writer at those addresses. After every step
// each block a live sequence holds must be the bytes a host-storage cache holds after the
// same operations: forks, copy-on-write of shared tails, a sliding window dropping blocks,
// truncation, freed blocks taken again (with Int4 keys, whose block offsets slot 0 sets).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/step_plan.h"
#include "kv/format/kv_slot_writer.h"
#include "kv/kv_cache_manager.h"

namespace kvscope {
namespace {

constexpr std::int64_t kLayers = 3, kHeads = 2, kHeadDim = 64, kBlock = 4, kContext = 64;

KvCacheConfig config(bool host_storage) {
  KvCacheConfig c;
  // layers 0 and 2: full attention with offset-int4 keys; layer 1: a window of 6 in int8
  c.groups = {{{0, 2}, KvDtype::Int4, KvDtype::F16, 0}, {{1}, KvDtype::Int8, KvDtype::Int4, 6}};
  c.n_kv_heads = kHeads;
  c.head_dim = kHeadDim;
  c.block_size = kBlock;
  c.max_context = kContext;
  c.n_blocks = 40;
  c.host_storage = host_storage;
  return c;
}

// K and V of one token of one layer: [n_kv_heads][head_dim], a function of (seq, layer, pos).
void token_kv(SeqId seq, std::int64_t layer, std::int64_t pos, std::vector<float>& k,
              std::vector<float>& v) {
  k.resize(kHeads * kHeadDim);
  v.resize(k.size());
  std::uint32_t s = static_cast<std::uint32_t>(seq * 7919 + layer * 131 + pos * 17 + 1);
  for (std::size_t i = 0; i < k.size(); ++i) {
    s = s * 1103515245u + 12345u;
    k[i] = static_cast<float>(static_cast<std::int32_t>(s) >> 8) / 4194304.0f;
    s = s * 1103515245u + 12345u;
    v[i] = static_cast<float>(static_cast<std::int32_t>(s) >> 8) / 8388608.0f;
  }
}

// Both caches, the device's pools and the operations applied to both.
class Contract {
 public:
  Contract() : host_(config(true)), device_(config(false)) {
    for (std::int64_t g = 0; g < device_.n_groups(); ++g) {
      pools_.emplace_back(
          static_cast<std::size_t>(device_.pool(g).n_blocks() * device_.layout(g).block_bytes()));
    }
  }

  void add(SeqId seq) {
    host_.add_sequence(seq);
    device_.add_sequence(seq);
  }
  void fork(SeqId parent, SeqId child) {
    host_.fork(parent, child);
    device_.fork(parent, child);
  }
  void truncate(SeqId seq, std::int64_t n) {
    host_.truncate(seq, n);
    device_.truncate(seq, n);
  }
  void free(SeqId seq) {
    host_.free_sequence(seq);
    device_.free_sequence(seq);
  }

  // One step appending n[i] tokens to seqs[i], as the scheduler runs it: grow each (the
  // device side collecting the copies), copies, then every token's K and V of every layer.
  void step(const std::vector<SeqId>& seqs, const std::vector<std::int64_t>& n) {
    std::vector<BlockCopy> copies;
    std::vector<SequenceChunk> chunks;
    for (std::size_t i = 0; i < seqs.size(); ++i) {
      const std::int64_t start = host_.n_tokens(seqs[i]);
      host_.grow(seqs[i], n[i]);
      device_.grow(seqs[i], n[i], &copies);
      tokens_.emplace_back(static_cast<std::size_t>(n[i]), 1);
      chunks.push_back({seqs[i], tokens_.back(), start, false});
    }
    for (const BlockCopy& c : copies) {  // in the order reported, before the step's writes
      const std::int64_t bb = device_.layout(c.group).block_bytes();
      std::uint8_t* base = pools_[static_cast<std::size_t>(c.group)].data();
      std::memmove(base + c.dst * bb, base + c.src * bb, static_cast<std::size_t>(bb));
    }
    copies_ += static_cast<std::int64_t>(copies.size());
    const cuda::StepPlan plan = cuda::plan_step(chunks, device_, 100, kContext);
    std::vector<float> k, v;
    for (std::int64_t layer = 0; layer < kLayers; ++layer) {
      const std::int64_t g = device_.group_of_layer(layer);
      const KvBlockLayout& L = device_.layout(g);
      const auto gi = static_cast<std::size_t>(g);
      std::int64_t t = 0;
      for (const SequenceChunk& c : chunks) {
        for (std::size_t i = 0; i < c.tokens.size(); ++i, ++t) {
          const auto at = [&](std::int64_t offset) {
            return static_cast<std::int64_t>(plan.ints[static_cast<std::size_t>(offset)]);
          };
          const std::int64_t pos = at(plan.pos_at + t);
          const std::int64_t block =
              at(plan.blocks_at[gi] + at(plan.table_start_at[gi] + t) + pos / L.block_size);
          token_kv(c.seq, layer, pos, k, v);
          host_.bytes().write_token(c.seq, layer, pos, k.data(), v.data());
          kv_write_slot(L, pools_[gi].data() + block * L.block_bytes(),
                        device_.layer_in_group(layer), pos % L.block_size, k.data(), v.data());
        }
      }
    }
  }

  // Every slot a live sequence has written: the device's bytes are the host cache's (data,
  // scales, and the int4 K offsets of each block whose slot 0 it wrote). Slots not written
  // yet are not compared: the device pools start zeroed, host storage need not.
  void expect_same_bytes(const std::string& when) const {
    for (const SeqId seq : host_.sequence_ids()) {
      const std::int64_t n = host_.n_tokens(seq);
      for (std::int64_t g = 0; g < host_.n_groups(); ++g) {
        const std::span<const BlockId> ids = device_.block_table(seq, g).blocks();
        const std::span<const BlockId> host_ids = host_.block_table(seq, g).blocks();
        ASSERT_EQ(std::vector<BlockId>(ids.begin(), ids.end()),
                  std::vector<BlockId>(host_ids.begin(), host_ids.end()))
            << when << ": the same block ids";
        const KvBlockLayout& L = device_.layout(g);
        for (std::size_t j = 0; j < ids.size(); ++j) {
          if (ids[j] == kNoBlock) continue;
          const std::uint8_t* dev =
              pools_[static_cast<std::size_t>(g)].data() + ids[j] * L.block_bytes();
          const std::uint8_t* ref = host_.bytes().block_data(g, ids[j]);
          const auto same = [&](std::int64_t offset, std::int64_t bytes) {
            return std::memcmp(dev + offset, ref + offset, static_cast<std::size_t>(bytes)) == 0;
          };
          const std::int64_t first = static_cast<std::int64_t>(j) * L.block_size;
          for (std::int64_t li = 0; li < L.n_layers; ++li) {
            for (std::int64_t h = 0; h < L.n_kv_heads; ++h) {
              if (L.k_dtype == KvDtype::Int4 && first < n) {
                EXPECT_TRUE(same(L.k_offsets_offset(li, h), L.head_dim * 2))
                    << when << ": int4 offsets, sequence " << seq << ", block " << ids[j];
              }
              for (std::int64_t pos = first; pos < std::min(n, first + L.block_size); ++pos) {
                const std::int64_t slot = pos - first;
                for (const KvSide side : {KvSide::K, KvSide::V}) {
                  EXPECT_TRUE(
                      same(L.data_offset(side, li, h, slot), L.data_stride(side)) &&
                      same(L.scales_offset(side, li, h, slot), 2 * L.scales_per_vector(side)))
                      << when << ": sequence " << seq << ", group " << g << ", block " << ids[j]
                      << ", position " << pos << (side == KvSide::K ? " K" : " V");
                }
              }
            }
          }
        }
      }
    }
  }

  std::int64_t copies() const { return copies_; }

 private:
  KvCacheManager host_, device_;
  std::vector<std::vector<std::uint8_t>> pools_;  // [n_groups] [n_blocks][block_bytes], zeroed
  std::vector<std::vector<TokenId>> tokens_;      // the chunks' ids (only their count matters)
  std::int64_t copies_ = 0;
};

TEST(KvByteContract, ReplayedCopiesAndTableAddressedWritesGiveTheHostCachesBytes) {
  Contract c;
  c.add(1);
  c.step({1}, {6});  // a prompt: block 0 full, block 1 half
  c.expect_same_bytes("prompt");
  c.fork(1, 2);  // both share the half tail
  c.fork(1, 3);
  c.step({1, 2, 3}, {1, 1, 1});  // each writes into the shared tail: copy-on-write
  c.expect_same_bytes("first decode after the forks");
  EXPECT_GT(c.copies(), 0);
  c.fork(1, 4);
  c.truncate(4, 5);              // a prefix ending mid-block: the tail stays shared until 4 grows
  for (int i = 0; i < 9; ++i) {  // across block boundaries; the window drops blocks
    c.step({1, 2, 3, 4}, {1, 1, 2, 1});
    c.expect_same_bytes("decode " + std::to_string(i));
  }
  c.free(2);  // its blocks go back to the free queue, bytes and int4 offsets left in them
  c.add(5);
  c.step({4, 5, 1}, {3, 9, 1});  // 5 takes the freed blocks
  c.expect_same_bytes("after a free and the blocks' reuse");
  for (int i = 0; i < 4; ++i) {
    c.step({1, 3, 4, 5}, {1, 2, 1, 3});
    c.expect_same_bytes("mixed " + std::to_string(i));
  }
}

}  // namespace
}  // namespace kvscope
