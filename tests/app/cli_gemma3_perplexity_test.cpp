// Gemma 3 270M's perplexity as llama-perplexity measures it (#37): `kvscope-cli perplexity
// -c 1024 --chunks 3` on an English licence text (tests/data/gpl-3.0.txt, 7,563 Gemma tokens)
// against llama.cpp's figure for the same file, text and cutting, 15.9753 (a 2026-08 build,
// its CPU backend, f16 cache; the 7 chunks of the whole text: 13.8774 against KVScope's
// 13.8185). Measured here: 15.9131, 0.39% below. The bound is 1%; a wrong window,
// rope base or norm moves the PPL by tens of percent. Skips without the model file
// (packaging/get-model.sh gemma-3-270m).
#include <cmath>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "app/cli_runner.h"
#include "support/test_data.h"

namespace kvscope::test {
namespace {

constexpr double kLlamaCppPpl = 15.9753;

TEST(CliGemma3Perplexity, WithinOnePercentOfLlamaPerplexityAtContext1024) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "3,072 positions of 262,144 logits: minutes in the sanitizer build; the "
                  "normal build runs it";
#endif
  KVSCOPE_REQUIRE_DOWNLOADED_MODEL(model, "gemma-3-270m-q4_k_m.gguf", "gemma-3-270m");
  const std::string text =
      (std::filesystem::path(__FILE__).parent_path().parent_path() / "data" / "gpl-3.0.txt")
          .string();
  const auto r = run_cli({"perplexity", "-m", model, "-f", text, "-c", "1024", "--chunks", "3",
                          "--backend", "cpu", "-t", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double ppl = number_after(r.out, "PPL");
  ::testing::Test::RecordProperty("ppl", std::to_string(ppl));
  EXPECT_LT(std::abs(ppl / kLlamaCppPpl - 1.0), 0.01) << ppl << " against " << kLlamaCppPpl;
}

}  // namespace
}  // namespace kvscope::test
