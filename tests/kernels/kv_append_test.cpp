// The KV append kernel must write exactly the bytes of the CPU reference (kv_slot_writer.h
// via KvCacheManager::write_token): every dtype pair, head_dim 1..256 (odd ones included for
// the padding bytes, 10 and 14 for int4 K groups that straddle a byte), block sizes 1..64,
// lengths crossing block boundaries, shuffled block tables, special values (NaN, inf, huge,
// tiny, all-zero groups), and for int4 K the block offsets, set by a slot-0 token of the same
// launch or of an earlier one.
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "backend/kernel_launchers.h"
#include "kv_test_fixture.h"

namespace kvscope {
namespace {

using test::kTestSeq;
using test::KvCase;

// K or V values of `length` tokens, [length][n_kv][head_dim], with special values sprinkled.
std::vector<float> kv_values(const KvCase& c, std::uint32_t seed) {
  auto x = test::random_floats(static_cast<std::size_t>(c.length * c.n_kv_heads * c.head_dim), seed,
                               4.0f);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            70000.0f,
                            -1e-7f,
                            3e-9f,
                            0.0f};
  for (std::size_t i = 0; i < x.size(); i += 97) x[i] = specials[(i / 97) % std::size(specials)];
  // one all-zero vector (its scales must be 0 and its data all zero codes)
  std::fill(x.begin(), x.begin() + c.head_dim, 0.0f);
  return x;
}

void expect_same_bytes(const KvCacheManager& kv, const std::vector<std::uint8_t>& device,
                       const KvCase& c, std::int64_t layer, const std::string& what) {
  const KvBlockLayout& L = kv.layout(0);
  int mismatches = 0;
  for (std::int64_t pos = 0; pos < c.length && mismatches < 5; ++pos) {
    const KvSlot s = kv.slot(kTestSeq, 0, pos);
    const std::uint8_t* host = kv.bytes().block_data(0, s.block);
    const std::uint8_t* dev = device.data() + s.block * L.block_bytes();
    if (c.k_dtype == KvDtype::Int4 && s.slot == 0) {  // the offsets this token set
      for (std::int64_t h = 0; h < c.n_kv_heads; ++h) {
        const auto o = L.k_offsets_offset(layer, h);
        if (std::memcmp(host + o, dev + o, static_cast<std::size_t>(2 * c.head_dim)) != 0) {
          ADD_FAILURE() << what << ": pos " << pos << " head " << h << " K offsets differ";
          ++mismatches;
        }
      }
    }
    for (const KvSide side : {KvSide::K, KvSide::V}) {
      for (std::int64_t h = 0; h < c.n_kv_heads; ++h) {
        const auto d = L.data_offset(side, layer, h, s.slot);
        const auto sc = L.scales_offset(side, layer, h, s.slot);
        const bool data_ok =
            std::memcmp(host + d, dev + d, static_cast<std::size_t>(L.data_stride(side))) == 0;
        const bool scales_ok =
            std::memcmp(host + sc, dev + sc,
                        static_cast<std::size_t>(2 * L.scales_per_vector(side))) == 0;
        if (!data_ok || !scales_ok) {
          ADD_FAILURE() << what << ": pos " << pos << " head " << h
                        << (side == KvSide::K ? " K" : " V") << (data_ok ? "" : " data")
                        << (scales_ok ? "" : " scales") << " differ";
          ++mismatches;
        }
      }
    }
  }
}

// The exact tail's copies (kv/exact_tail.h): every written position whose block has a copy
// holds the same fp16 bytes on both sides.
void expect_same_copies(const KvCacheManager& kv, const std::vector<std::uint8_t>& device,
                        const KvCase& c, std::int64_t layer, const std::string& what) {
  const ExactTail& tail = *kv.exact_tail(0);
  const KvBlockLayout& S = tail.layout();
  std::int64_t checked = 0;
  for (std::int64_t pos = 0; pos < c.length; ++pos) {
    const KvSlot s = kv.slot(kTestSeq, 0, pos);
    const std::int32_t shadow = tail.shadow_index(s.block);
    if (shadow < 0) continue;
    const std::uint8_t* host = tail.shadow(s.block);
    const std::uint8_t* dev = device.data() + shadow * S.block_bytes();
    for (const KvSide side : {KvSide::K, KvSide::V}) {
      for (std::int64_t h = 0; h < c.n_kv_heads; ++h) {
        const auto d = S.data_offset(side, layer, h, s.slot);
        EXPECT_EQ(std::memcmp(host + d, dev + d, static_cast<std::size_t>(S.data_stride(side))), 0)
            << what << ": pos " << pos << " head " << h << (side == KvSide::K ? " K" : " V")
            << " exact copy differs";
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 0) << what << ": no position has an exact copy";
}

// Appends tokens [0, split) in one launch and [split, length) in a second (split 0: all in
// one), after the CPU wrote them all; with an exact tail also into its copies.
void check_append(const KvCase& c, std::int64_t split = 0) {
  KvCacheManager kv = test::make_shuffled_kv(c);
  const std::int64_t layer = c.n_layers - 1;
  const auto k = kv_values(c, 1), v = kv_values(c, 2);
  const std::int64_t kv_dim = c.n_kv_heads * c.head_dim;
  for (std::int64_t pos = 0; pos < c.length; ++pos) {
    kv.bytes().write_token(kTestSeq, layer, pos, &k[pos * kv_dim], &v[pos * kv_dim]);
  }
  const KvBlockLayout& L = kv.layout(0);
  const auto pool_bytes = static_cast<std::size_t>(kv.pool(0).n_blocks() * L.block_bytes());
  auto pool = test::device_zeros<std::uint8_t>(pool_bytes);
  const ExactTail* tail = kv.exact_tail(0);
  const auto copy_bytes =
      static_cast<std::size_t>(tail ? tail->n_shadows() * tail->layout().block_bytes() : 0);
  auto copies = test::device_zeros<std::uint8_t>(copy_bytes);
  auto dk = test::to_device(k), dv = test::to_device(v);
  const std::int64_t length = c.length;
  for (const auto& [start, end] : {std::pair{std::int64_t{0}, split}, std::pair{split, length}}) {
    if (start == end) continue;
    test::TestStep step;
    test::make_step(kv, start, end - start, step);
    cuda::launch_kv_append(cuda::kv_layer_layout(L, layer),
                           test::step_tables(step, pool.as<std::uint8_t>(), &kv, layer,
                                             tail ? copies.as<std::uint8_t>() : nullptr),
                           dk.as<float>() + start * kv_dim, dv.as<float>() + start * kv_dim,
                           static_cast<int>(end - start), nullptr);
  }
  const auto device = test::from_device<std::uint8_t>(pool, pool_bytes);
  const std::string what = std::string(kv_dtype_name(c.k_dtype)) + "/" +
                           std::string(kv_dtype_name(c.v_dtype)) + " head_dim " +
                           std::to_string(c.head_dim) + " block " + std::to_string(c.block_size) +
                           " split " + std::to_string(split);
  expect_same_bytes(kv, device, c, layer, what);
  if (tail) {
    expect_same_copies(kv, test::from_device<std::uint8_t>(copies, copy_bytes), c, layer, what);
  }
}

TEST(CudaKvAppend, WritesTheSameBytesAsTheCpuQuantizerForEveryDtypeAndShape) {
  KVSCOPE_REQUIRE_CUDA();
  const std::pair<KvDtype, KvDtype> dtypes[] = {
      {KvDtype::F16, KvDtype::F16},   {KvDtype::Int8, KvDtype::Int8},
      {KvDtype::Int4, KvDtype::Int4}, {KvDtype::Int8, KvDtype::Int4},
      {KvDtype::F16, KvDtype::Int4},  {KvDtype::Int4, KvDtype::F16}};
  for (const auto& [kd, vd] : dtypes) {
    for (const int head_dim : {1, 5, 8, 10, 14, 31, 40, 64, 100, 128, 130, 256}) {
      for (const int block_size : {1, 3, 16, 64}) {
        KvCase c;
        c.k_dtype = kd;
        c.v_dtype = vd;
        c.head_dim = head_dim;
        c.block_size = block_size;
        c.n_kv_heads = head_dim > 128 ? 2 : 3;
        c.length = 2 * block_size + 5;  // crosses at least two block boundaries
        check_append(c);
      }
    }
  }
}

// A prompt read in chunks: the second launch starts inside a block whose slot 0 (and so its
// int4 K offsets) the first launch wrote, and itself crosses into blocks it starts.
TEST(CudaKvAppend, Int4KeysOfALaterChunkUseTheOffsetsAnEarlierLaunchSet) {
  KVSCOPE_REQUIRE_CUDA();
  for (const int head_dim : {8, 10, 64, 128}) {
    for (const int block_size : {3, 16}) {
      KvCase c;
      c.k_dtype = KvDtype::Int4;
      c.v_dtype = KvDtype::Int4;
      c.head_dim = head_dim;
      c.block_size = block_size;
      c.length = 3 * block_size + 2;
      for (const std::int64_t split : {std::int64_t{1}, std::int64_t{block_size} + 1}) {
        check_append(c, split);
      }
    }
  }
}

// With an exact tail the append also writes each token into its block's fp16 copy when the
// block has one, and leaves the quantized bytes as they were.
TEST(CudaKvAppend, TokensOfBlocksWithAnExactCopyAreWrittenThereInFp16Too) {
  KVSCOPE_REQUIRE_CUDA();
  for (const auto& [kd, vd] :
       {std::pair{KvDtype::Int4, KvDtype::Int4}, std::pair{KvDtype::Int8, KvDtype::F16}}) {
    for (const int head_dim : {8, 64, 100}) {
      for (const int block_size : {3, 16}) {
        KvCase c;
        c.k_dtype = kd;
        c.v_dtype = vd;
        c.head_dim = head_dim;
        c.block_size = block_size;
        c.length = 3 * block_size + 2;
        c.exact_tail = 2;
        check_append(c);
        check_append(c, block_size + 1);
      }
    }
  }
}

}  // namespace
}  // namespace kvscope
