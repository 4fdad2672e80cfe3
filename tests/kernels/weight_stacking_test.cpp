// Stacked projections (wq | wk | wv, w_gate | w_up in one allocation, device_weights.h): where
// each part starts, for every device weight type and odd shapes, and that every launcher's
// check (check_device_weight, host code) accepts each part there. Before the alignment was per
// type, a Q8_0 wk after an odd number of wq rows (34-byte rows) failed the 16-byte check on
// every prompt step. Runs without a device: only addresses are looked at.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/device_weights.h"
#include "backend/kernel_launchers.h"
#include "kernel_test_support.h"
#include "util/error.h"

namespace kvscope {
namespace {

using cuda::DeviceWeight;
using cuda::DeviceWeightType;

DeviceWeight weight(DeviceWeightType type, std::int64_t rows, std::int64_t cols) {
  DeviceWeight w;
  w.type = type;
  w.rows = rows;
  w.cols = cols;
  w.row_bytes = cuda::device_row_bytes(type, cols);
  return w;
}

// A cudaMalloc'd base: 256-byte aligned (only the address matters).
const std::uint8_t* device_base() {
  return reinterpret_cast<const std::uint8_t*>(std::uintptr_t{1} << 20);
}

class WeightStacking : public ::testing::TestWithParam<test::WeightTypeCase> {};

TEST_P(WeightStacking, EveryPartOfAStackStartsWhereItsTypesLoadsCanReadIt) {
  const DeviceWeightType type = GetParam().device;
  const std::int64_t block = cuda::device_block_values(type);
  const std::int64_t align = cuda::device_weight_alignment(type);
  int off_16 = 0;  // parts the old rule (16 bytes for every quantized type) refused
  for (const std::int64_t blocks : {1, 3, 5, 7, 9}) {
    const std::int64_t cols = blocks * block;
    for (const std::int64_t q_rows : {1, 3, 7, 9, 27, 67}) {
      for (const std::int64_t kv_rows : {1, 3, 5, 13}) {
        const std::vector<DeviceWeight> parts = {
            weight(type, q_rows, cols), weight(type, kv_rows, cols), weight(type, kv_rows, cols)};
        const auto offsets = cuda::stacked_offsets(parts);
        ASSERT_TRUE(offsets.has_value()) << cols << " cols, " << q_rows << " + " << kv_rows;
        ASSERT_EQ(offsets->size(), parts.size() + 1);
        EXPECT_EQ((*offsets)[1], static_cast<std::size_t>(q_rows * parts[0].row_bytes));
        EXPECT_EQ((*offsets)[2],
                  (*offsets)[1] + static_cast<std::size_t>(kv_rows * parts[1].row_bytes));
        EXPECT_EQ(offsets->back(),
                  (*offsets)[2] + static_cast<std::size_t>(kv_rows * parts[2].row_bytes));
        for (std::size_t i = 0; i < parts.size(); ++i) {
          DeviceWeight p = parts[i];
          p.data = device_base() + (*offsets)[i];
          EXPECT_EQ((*offsets)[i] % static_cast<std::size_t>(align), 0u);
          EXPECT_NO_THROW(cuda::check_device_weight(p, "test"))
              << "part " << i << " at offset " << (*offsets)[i];
          off_16 += cuda::is_quantized(type) && (*offsets)[i] % 16 != 0 ? 1 : 0;
        }
      }
    }
  }
  // the 2- and 4-byte types' odd stacks do start off 16 bytes; the K-quants' 16-byte ones never
  if (align < 16 && cuda::is_quantized(type)) {
    EXPECT_GT(off_16, 0);
  } else {
    EXPECT_EQ(off_16, 0);
  }
}

TEST_P(WeightStacking, ADataPointerOffItsTypesAlignmentIsRefusedNamingIt) {
  const DeviceWeightType type = GetParam().device;
  const std::int64_t align = cuda::device_weight_alignment(type);
  DeviceWeight w = weight(type, 4, cuda::device_block_values(type) * 2);
  w.data = device_base() + align;
  EXPECT_NO_THROW(cuda::check_device_weight(w, "test"));
  w.data = device_base() + 1;
  try {
    cuda::check_device_weight(w, "launch_x");
    ADD_FAILURE() << "a 1-byte offset passed";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(align) + "-byte aligned"),
              std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, WeightStacking, ::testing::ValuesIn(test::all_weight_types()),
                         test::weight_type_test_name);

TEST(WeightStackingRules, AlignmentIsWhatEachCodecsLoadsNeed) {
  using D = DeviceWeightType;
  for (const D t : {D::Q4_0, D::Q5_0, D::Q8_0, D::Q6_K, D::F16}) {
    EXPECT_EQ(cuda::device_weight_alignment(t), 2) << cuda::device_weight_type_name(t);
  }
  for (const D t : {D::Q4_1, D::Q5_1, D::F32}) {
    EXPECT_EQ(cuda::device_weight_alignment(t), 4) << cuda::device_weight_type_name(t);
  }
  for (const D t : {D::Q4_K, D::Q5_K}) {
    EXPECT_EQ(cuda::device_weight_alignment(t), 16) << cuda::device_weight_type_name(t);
  }
}

TEST(WeightStackingRules, PartsOfOtherTypesWidthsOrMisalignedStartsAreNotStacked) {
  using D = DeviceWeightType;
  EXPECT_FALSE(cuda::stacked_offsets({weight(D::Q4_0, 3, 64), weight(D::Q8_0, 3, 64)}));
  EXPECT_FALSE(cuda::stacked_offsets({weight(D::Q4_K, 3, 256), weight(D::Q4_K, 3, 512)}));
  // a Q4_K part after 18 bytes (a row size no Q4_K matrix has): its loads would fault
  DeviceWeight odd = weight(D::Q4_K, 1, 256);
  odd.row_bytes = 18;
  EXPECT_FALSE(cuda::stacked_offsets({odd, weight(D::Q4_K, 1, 256)}));
  EXPECT_TRUE(cuda::stacked_offsets({weight(D::Q4_K, 1, 256)}));
}

}  // namespace
}  // namespace kvscope
