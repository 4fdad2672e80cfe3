// The answer for a catalog file before download is the answer for the downloaded file:
// the catalog's shape and size go through answer_local_fit like a scanned file's headers.
#include "plan/catalog_fit.h"

#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "model/discovery/local_model.h"
#include "support/test_data.h"

namespace kvscope {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

const std::vector<CatalogModel>& catalog() {
  static const auto c = load_model_catalog(std::filesystem::path(__FILE__).parent_path() / ".." /
                                           ".." / ".." / "resources" / "catalog" / "models.json");
  return c;
}

// SmolLM2-135M Q4_1 is in the catalog with the shared file's exact size: before and after
// download the answers agree, the catalog's never the more optimistic (its weights include
// the file's header).
TEST(CatalogFit, AgreesWithTheDownloadedFile) {
  KVSCOPE_REQUIRE_SHARED(smol, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  const LocalModel real = describe_gguf({smol});
  ASSERT_TRUE(real.ok()) << real.error;
  const CatalogChoice c = find_catalog_file(catalog(), "smollm2-135m-instruct:Q4_1");
  for (std::int64_t memory = 100 * kMiB; memory <= 1000 * kMiB; memory += 50 * kMiB) {
    SCOPED_TRACE(testing::Message() << memory / kMiB << " MiB");
    const LocalFitQuestion q{.memory_bytes = memory, .context = 4096};
    const LocalFitAnswer before = answer_catalog_fit(*c.model, *c.file, q);
    const LocalFitAnswer after = answer_local_fit(real, q);
    ASSERT_TRUE(before.ok()) << before.error;
    EXPECT_LE(before.fits, after.fits);
    EXPECT_LE(before.max_context.tokens, after.max_context.tokens);
    // The header is ~1.7 MB of 98 MB: the answers are one or two blocks of KV apart.
    if (before.kv_dtype == after.kv_dtype) {
      EXPECT_LE(after.max_context.tokens - before.max_context.tokens, 256);
    }
    EXPECT_LE(before.short_by_bytes - after.short_by_bytes, 4 * kMiB);
  }
}

TEST(CatalogFit, SevenBillionFitsA24GiBGpuNotA4GiBOne) {
  const CatalogChoice c = find_catalog_file(catalog(), "qwen2.5-7b-instruct:Q4_K_M");
  const LocalFitAnswer big = answer_catalog_fit(*c.model, *c.file, {.memory_bytes = 24 * kGiB});
  ASSERT_TRUE(big.ok()) << big.error;
  EXPECT_TRUE(big.fits);
  EXPECT_EQ(big.context, 32768);  // the model's limit when no context is asked
  EXPECT_EQ(big.kv_dtype, KvDtype::F16);
  const LocalFitAnswer small = answer_catalog_fit(*c.model, *c.file, {.memory_bytes = 4 * kGiB});
  ASSERT_TRUE(small.ok()) << small.error;
  EXPECT_FALSE(small.fits);
  // Not even the 4.68 GB of weights fit in 90% of 4 GiB.
  EXPECT_GT(small.short_by_bytes, c.file->bytes - 4 * kGiB * 9 / 10);
  EXPECT_NE(describe_local_fit(small).find("short by"), std::string::npos);
}

// #40: a model larger than the GPU is answered with how much of it fits: the most layers
// whose GPU side fits, more of them on a larger GPU (5 GiB; 6 GiB holds it whole at 8k), none on
// one too small for the CUDA context; and only on the CUDA backend.
TEST(CatalogFit, AModelLargerThanTheGpuSaysHowManyLayersFit) {
  const CatalogChoice c = find_catalog_file(catalog(), "qwen2.5-7b-instruct:Q4_K_M");
  const LocalFitAnswer four =
      answer_catalog_fit(*c.model, *c.file, {.memory_bytes = 4 * kGiB, .context = 8192});
  const LocalFitAnswer five =
      answer_catalog_fit(*c.model, *c.file, {.memory_bytes = 5 * kGiB, .context = 8192});
  ASSERT_TRUE(four.ok() && five.ok());
  EXPECT_FALSE(four.fits);
  EXPECT_EQ(four.n_layers, 28);
  EXPECT_GT(four.gpu_layers, 0);
  EXPECT_LT(four.gpu_layers, five.gpu_layers);
  EXPECT_LT(five.gpu_layers, 28);
  EXPECT_NE(describe_local_fit(four).find(
                fmt::format("fits with {} of 28 layers on the GPU", four.gpu_layers)),
            std::string::npos)
      << describe_local_fit(four);
  const LocalFitAnswer tiny = answer_catalog_fit(*c.model, *c.file, {.memory_bytes = kGiB / 2});
  EXPECT_EQ(tiny.gpu_layers, 0);
  EXPECT_EQ(describe_local_fit(tiny).rfind("short by", 0), 0u);
  const LocalFitAnswer cpu = answer_catalog_fit(
      *c.model, *c.file, {.memory_bytes = 4 * kGiB, .backend = PlanBackend::Cpu});
  EXPECT_EQ(cpu.n_layers, 0);
}

TEST(CatalogFit, UnsupportedArchitectureSaysSo) {
  const CatalogChoice c = find_catalog_file(catalog(), "phi-3.5-mini-instruct");
  const LocalFitAnswer a = answer_catalog_fit(*c.model, *c.file, {.memory_bytes = 24 * kGiB});
  EXPECT_FALSE(a.ok());
  EXPECT_NE(a.error.find("not supported yet"), std::string::npos) << a.error;
  EXPECT_NE(a.error.find("phi3"), std::string::npos) << a.error;
  // It names every architecture the engine runs, from the same list the GGUF reader checks.
  EXPECT_NE(a.error.find("llama, qwen2, qwen3, gemma2 and gemma3"), std::string::npos) << a.error;
}

// An untied model reads one row of its token table per decoded token.
TEST(CatalogFit, ReadPerTokenLeavesOutTheUntiedTable) {
  const CatalogChoice tied = find_catalog_file(catalog(), "qwen2.5-0.5b-instruct");
  EXPECT_EQ(catalog_local_model(*tied.model, *tied.file).weight_read_per_token, tied.file->bytes);
  const CatalogChoice untied = find_catalog_file(catalog(), "mistral-7b-instruct-v0.3:Q4_K_M");
  const LocalModel m = catalog_local_model(*untied.model, *untied.file);
  // vocab x dim = 134M of 7.25B parameters: ~1.85% of the file is not read.
  const double unread =
      1.0 - static_cast<double>(m.weight_read_per_token) / static_cast<double>(untied.file->bytes);
  EXPECT_NEAR(unread, 32768.0 * 4096.0 / 7248023552.0, 1e-4);
}

}  // namespace
}  // namespace kvscope
