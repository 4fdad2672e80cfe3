// `kvscope-cli bench`: speed medians, and the memory side of decoding (bytes per token
// from the planner's roofline, the measured copy bandwidth, the fraction reached), on a
// model file or on a random-weight model of a preset's shape written on first use.
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli_runner.h"
#include "support/test_data.h"

namespace kvscope::test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

nlohmann::json bench_json(const std::vector<std::string>& args) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

void expect_traffic(const nlohmann::json& j) {
  EXPECT_GT(j.at("decode_tokens_per_s").get<double>(), 0.0);
  EXPECT_GT(j.at("prompt_tokens_per_s").get<double>(), 0.0);
  const auto weights = j.at("weight_bytes_per_token").get<std::int64_t>();
  const auto kv = j.at("kv_bytes_per_token").get<std::int64_t>();
  EXPECT_GT(weights, 0);
  EXPECT_GT(kv, 0);
  EXPECT_EQ(j.at("bytes_per_token").get<std::int64_t>(), weights + kv);
  EXPECT_GT(j.at("copy_bandwidth_gb_s").get<double>(), 0.1);
  EXPECT_NEAR(j.at("achieved_gb_s").get<double>(),
              static_cast<double>(weights + kv) * j.at("decode_tokens_per_s").get<double>() / 1e9,
              1e-6);
  EXPECT_NEAR(j.at("bandwidth_fraction").get<double>(),
              j.at("achieved_gb_s").get<double>() / j.at("copy_bandwidth_gb_s").get<double>(),
              1e-9);
}

TEST(CliBench, ReportsSpeedAndTheBytesEachDecodedTokenReads) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const nlohmann::json j =
      bench_json({"bench", "-m", model, "-p", "32", "-n", "16", "-r", "1", "-t", "1", "--json"});
  expect_traffic(j);
  EXPECT_EQ(j.at("decode_samples").size(), 1u);
}

// A one-model catalogue with a small shape, so the synthetic path runs in a test.
std::string tiny_presets() {
  const fs::path dir = fs::path(scratch_dir()) / "bench-presets";
  fs::create_directories(dir);
  std::ofstream(dir / "models.json") << R"({"models": [{
    "slug": "tiny-llama-shape", "name": "Tiny", "architecture": "llama", "n_params": 200000,
    "n_layers": 2, "dim": 64, "n_heads": 4, "n_kv_heads": 2, "head_dim": 16, "ffn_dim": 128,
    "vocab_size": 320, "context_length": 256, "sliding_window": 0, "tied_embeddings": false}]})";
  return dir.string();
}

TEST(CliBench, SyntheticModelsOfAPresetShapeAreWrittenOnceAndReused) {
  const std::string presets = tiny_presets();
  const fs::path cache = fs::path(scratch_dir()) / "bench-synthetic";
  fs::remove_all(cache);
  const std::vector<std::string> args = {"bench",
                                         "--synthetic",
                                         "tiny-llama-shape",
                                         "--weights",
                                         "q8_0",
                                         "--presets",
                                         presets,
                                         "--synthetic-dir",
                                         cache.string(),
                                         "-p",
                                         "16",
                                         "-n",
                                         "8",
                                         "-r",
                                         "1",
                                         "-t",
                                         "1",
                                         "--json"};
  const CliResult first = run_cli(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.err, HasSubstr("writing"));
  EXPECT_TRUE(fs::exists(cache / "tiny-llama-shape-q8_0.gguf"));
  const nlohmann::json j = nlohmann::json::parse(first.out);
  EXPECT_THAT(j.at("model").get<std::string>(), HasSubstr("random weights"));
  expect_traffic(j);

  const CliResult again = run_cli(args);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.err, ::testing::Not(HasSubstr("writing")));
}

TEST(CliBench, ModelChoiceMistakesAreOneLineErrors) {
  const std::string presets = tiny_presets();
  const CliResult neither = run_cli({"bench", "-p", "8"});
  EXPECT_GT(neither.exit_code, 0);
  EXPECT_THAT(neither.err, HasSubstr("--synthetic"));
  const CliResult unknown =
      run_cli({"bench", "--synthetic", "no-such-model", "--presets", presets});
  EXPECT_GT(unknown.exit_code, 0);
  EXPECT_THAT(unknown.err, HasSubstr("tiny-llama-shape"));  // the known ones are listed
  const CliResult weights = run_cli(
      {"bench", "--synthetic", "tiny-llama-shape", "--presets", presets, "--weights", "q9_9"});
  EXPECT_GT(weights.exit_code, 0);
  EXPECT_THAT(weights.err, HasSubstr("q9_9"));
}

}  // namespace
}  // namespace kvscope::test
