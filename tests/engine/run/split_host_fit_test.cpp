// A model split between GPU and CPU keeps only its CPU side in host memory (issue #40): that
// side's weights, its layer groups' pools and its workspace are checked against the machine's
// memory, not the whole model's weights, and the GPU's groups are not counted at all.
#include <cstdint>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/model_layer_groups.h"
#include "run/kv_host_fit.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;

// 4 layers, 2 KV heads of 8, f16, blocks of 16 tokens, split after layer 1: each side's group
// has 2 layers, 2 x 2 x 2 x 8 x 16 x 2 = 2,048 bytes a block, 100 blocks = 204,800 bytes.
KvCacheConfig split_config() {
  KvCacheConfig c;
  c.groups = split_layer_groups(uniform_layer_groups(4, KvDtype::F16), 2);
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.block_size = 16;
  c.max_context = 1024;
  c.host_storage = true;
  c.n_blocks = 100;
  return c;
}

constexpr std::int64_t kCpuPool = 100 * 2048;  // the CPU's group only
const HostSide kCpu{2, 4, 1'000'000, 50'000};  // layers [2, 4)
constexpr std::uint64_t kCpuNeeds = 1'000'000 + kCpuPool + 50'000;

TEST(SplitHostFit, ACpuSideThatFitsPassesWhateverTheGpuSideHolds) {
  EXPECT_NO_THROW(check_split_fits_host(split_config(), kCpu, kCpuNeeds));
}

TEST(SplitHostFit, ACpuSideOverTheMachinesMemoryNamesWhatItNeedsAndWhatTheMachineHas) {
  try {
    check_split_fits_host(split_config(), kCpu, kCpuNeeds - 1);
    FAIL() << "a CPU side of " << kCpuNeeds << " bytes fit in one byte less";
  } catch (const CapacityError&) {
  }
  try {
    check_split_fits_host(split_config(), kCpu, 1'100'000);
    FAIL() << "a CPU side of " << kCpuNeeds << " bytes fit in 1,100,000";
  } catch (const CapacityError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the CPU's side of the split (layers 2 to 3 of 4) needs "
                                    "1.20 MiB: its weights 977 KiB, its KV cache 200 KiB (100 "
                                    "blocks a layer group"));
    EXPECT_THAT(e.what(), HasSubstr("its workspace 48.8 KiB; this machine has 1.05 MiB"));
    EXPECT_THAT(e.what(), HasSubstr("--gpu-layers"));
  }
}

TEST(SplitHostFit, ABudgetAndUnknownMemoryAreNotChecked) {
  KvCacheConfig budget = split_config();
  budget.n_blocks = 0;
  budget.budget_bytes = std::int64_t{1} << 40;
  EXPECT_NO_THROW(check_split_fits_host(budget, kCpu, 1));
  EXPECT_NO_THROW(check_split_fits_host(split_config(), kCpu, 0));
}

}  // namespace
}  // namespace kvscope
