// A KV cache sized by block count (the CPU with no budget) is checked against the machine's
// memory before anything is allocated (issue #38, item 6): `run -c 1073741824` on stories260K
// used to reach 2.3 GB of bookkeeping before its storage was refused.
#include "run/kv_host_fit.h"

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "run/engine.h"
#include "support/engine_fixture.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;

// 2 layers, 2 KV heads of 8, f16, blocks of 16 tokens: 2 x 2 x 2 x 8 x 16 x 2 = 2,048 bytes.
KvCacheConfig blocks_config(std::int64_t context, std::int64_t sequences) {
  KvCacheConfig c;
  c.groups = uniform_layer_groups(2, KvDtype::F16);
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.block_size = 16;
  c.max_context = context;
  c.n_blocks = sequences * ((context + 15) / 16);
  return c;
}

TEST(KvHostFit, PoolThatFitsBesideTheWeightsPasses) {
  EXPECT_NO_THROW(check_kv_fits_host(blocks_config(1024, 2), 2, 1000, 2 * 64 * 2048 + 1000));
}

TEST(KvHostFit, PoolOverTheMachinesMemoryNamesContextNeedAndWhatFits) {
  try {
    check_kv_fits_host(blocks_config(1 << 30, 4), 4, 0, std::uint64_t{1} << 30);
    FAIL() << "4 x 2^30 tokens of 128 bytes fit in 1 GiB";
  } catch (const CapacityError& e) {
    EXPECT_THAT(e.what(), HasSubstr("4 sequences of 1,073,741,824 tokens"));
    EXPECT_THAT(e.what(), HasSubstr("needs 512 GiB, more than this machine's 1.00 GiB"));
    EXPECT_THAT(e.what(), HasSubstr("about 2,097,152 tokens fit"));  // 2^30 / 128 / 4
  }
}

TEST(KvHostFit, BudgetsAndUnknownMemoryAreNotChecked) {
  KvCacheConfig budget = blocks_config(1 << 30, 1);
  budget.n_blocks = 0;
  budget.budget_bytes = std::int64_t{1} << 40;
  EXPECT_NO_THROW(check_kv_fits_host(budget, 1, 0, 1 << 20));
  EXPECT_NO_THROW(check_kv_fits_host(blocks_config(1 << 30, 1), 1, 0, 0));
}

// Peak resident memory since the last reset_peak_rss(), in KiB; -1 where Linux's
// /proc/self/clear_refs cannot reset it.
bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  return static_cast<bool>(clear.flush());
}
long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

TEST(KvHostFit, EngineRefusesAHugeContextBeforeAllocatingIt) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const bool measured = reset_peak_rss();
  const long before = peak_rss_kib();
  try {
    Engine engine(model, small_options(std::int64_t{1} << 30));
    FAIL() << "an engine for 2^30 tokens of context was built";
  } catch (const CapacityError& e) {
    EXPECT_THAT(e.what(), HasSubstr("of 1,073,741,824 tokens (the context length) needs"));
  }
  if (measured && before > 0) {
    EXPECT_LT(peak_rss_kib() - before, 256 * 1024) << "KiB of peak RSS for a refused context";
  }
}

}  // namespace
}  // namespace kvscope
