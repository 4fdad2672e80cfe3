// kvscope-cli end to end: the commands print what the reference data says they should,
// and every bad input ends in one clear line on stderr and a non-zero exit, never a crash.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli_runner.h"
#include "support/test_data.h"

namespace kvscope::test {
namespace {

using ::testing::HasSubstr;

nlohmann::json reference_cases(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in).at("cases");
}

// One error line (besides "note:" lines, such as why CUDA is not used), naming the
// command, and no sign of a crash or an uncaught exception.
void expect_clean_error(const CliResult& r, const std::string& mentions) {
  EXPECT_GT(r.exit_code, 0) << "stdout: " << r.out << "\nstderr: " << r.err;
  int error_lines = 0;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) error_lines += line.rfind("note:", 0) != 0;
  EXPECT_EQ(error_lines, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("kvscope-cli"));
  EXPECT_THAT(r.err, HasSubstr(mentions));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("internal error")));
}

TEST(Cli, TokenizeGivesTheReferencePromptIds) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/stories260K-greedy.json");
  for (const auto& c : reference_cases(reference)) {
    const auto r = run_cli({"tokenize", "-m", model, "-p", c.at("prompt"), "--ids"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out), c.at("prompt_ids")) << c.at("prompt");
  }
}

TEST(Cli, TokenizeWithoutBosOmitsIt) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const auto r = run_cli({"tokenize", "-m", model, "-p", "Once upon a time", "--ids", "--no-bos"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json::parse("[403, 407, 261, 378]"));
}

TEST(Cli, RunJsonGreedyMatchesTheReferenceIds) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/stories260K-greedy.json");
  const auto c = reference_cases(reference).at(0);
  const auto r = run_cli({"run", "-m", model, "-p", c.at("prompt"), "-n", "16", "--temp", "0",
                          "--json", "--top-logprobs", "5", "--backend", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out.at("prompt_ids"), c.at("prompt_ids"));
  const auto ref_ids = c.at("greedy_ids").get<std::vector<int>>();
  EXPECT_EQ(out.at("generated_ids").get<std::vector<int>>(),
            std::vector<int>(ref_ids.begin(), ref_ids.begin() + 16));
  ASSERT_EQ(out.at("steps").size(), 16u);
  EXPECT_EQ(out.at("steps")[0].at("top").size(), 5u);
}

TEST(Cli, InspectJsonDescribesStories260K) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const auto r = run_cli({"inspect", model, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("spec").at("n_layers"), 5);
  EXPECT_EQ(j.at("spec").at("n_kv_heads"), 4);
  EXPECT_EQ(j.at("spec").at("head_dim"), 8);
  EXPECT_EQ(j.at("tokenizer").at("vocab_size"), 512);
  // f16 K+V: 2 x 4 heads x 8 dims x 2 bytes x 5 layers
  EXPECT_EQ(j.at("kv_cache").at("f16").at("bytes_per_token"), 640);
  // int4: per KV head, K 4 B + 2 groups x (s, m) x 2 B, V 4 B + 2 B, and 8 x 2 B of K offsets
  // per block of 16 tokens: (12 + 6) x 16 + 16 = 304 B per block, 19 B per token.
  EXPECT_EQ(j.at("kv_cache").at("int4").at("bytes_per_block_per_layer"), 4 * 304);
  EXPECT_EQ(j.at("kv_cache").at("int4").at("bytes_per_token"), 4 * 19 * 5);
  // stories260K's context 2048 = 128 blocks
  EXPECT_EQ(j.at("spec").at("context_length"), 2048);
  EXPECT_EQ(j.at("kv_cache").at("int4").at("bytes_full_context"), 128 * 4 * 304 * 5);
}

TEST(Cli, PlanAgreesWithInspectOnWeightBytes) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const auto inspect = run_cli({"inspect", model, "--json"});
  const auto plan = run_cli({"plan", "-m", model, "--vram", "1GiB", "--json"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_EQ(nlohmann::json::parse(plan.out).at("weights_bytes"),
            nlohmann::json::parse(inspect.out).at("weight_bytes"));
}

TEST(Cli, PlanPinsTheMistralExample) {
  const auto r = run_cli({"plan", "--model", "mistral-7b-v0.1", "--kv-budget", "8GiB", "--batch",
                          "2", "-ctk", "f16", "-ctv", "f16", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The preset's own context limit (32,768) and memory allow exactly the same here.
  EXPECT_EQ(nlohmann::json::parse(r.out).at("max_context"), 32768);
}

TEST(Cli, MissingModelFileIsOneClearLine) {
  expect_clean_error(run_cli({"inspect", "/nonexistent/model.gguf"}), "/nonexistent/model.gguf");
}

TEST(Cli, GarbageModelFileIsOneClearLine) {
  const auto path = scratch_dir() / "garbage.gguf";
  std::ofstream(path) << "this is not a model";
  expect_clean_error(run_cli({"run", "-m", path.string(), "-p", "hi"}), "garbage.gguf");
}

TEST(Cli, BadOptionsAreOneClearLine) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  expect_clean_error(run_cli({"run", "-m", model, "-p", "hi", "-ctk", "int3"}), "int3");
  expect_clean_error(run_cli({"run", "-m", model, "-p", "hi", "-n", "ten"}), "-n");
  expect_clean_error(run_cli({"run", "-m", model}), "-p");
  expect_clean_error(run_cli({"run", "-m", model, "-p", "hi", "--frobnicate"}), "--frobnicate");
  expect_clean_error(run_cli({"run", "-m", model, "-p", "hi", "--backend", "tpu"}), "tpu");
}

// Every numeric option states its range; a value outside it is one clear line naming the
// option and the range, never a crash (perplexity -c 1 used to divide by zero).
TEST(Cli, NumericOptionsOutsideTheirRangeNameTheOptionAndTheRange) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  expect_clean_error(run_cli({"run", "-m", model, "-p", "hi", "-t", "-2"}),
                     "option -t: -2 is outside 0..4096");
  expect_clean_error(run_cli({"run", "-m", model, "-p", "hi", "--top-p", "1.5"}),
                     "option --top-p: 1.5 is outside 0..1");
  expect_clean_error(run_cli({"run", "-m", model, "-p", "hi", "--temp", "nan"}), "--temp");
  expect_clean_error(run_cli({"bench", "-m", model, "-r", "0"}), "option -r: 0 is outside 1..1000");
  expect_clean_error(run_cli({"plan", "-m", model, "--vram", "8GiB", "--util", "2"}),
                     "option --util: 2 is outside 0.01..1");
  const std::string text = (scratch_dir() / "text.txt").string();
  {
    std::ofstream out(text);
    out << "Once upon a time there was a little dog. It liked to run and play in the sun.";
  }
  expect_clean_error(run_cli({"perplexity", "-m", model, "-f", text, "-c", "1"}),
                     "perplexity needs at least 3");
}

TEST(Cli, PromptLongerThanTheContextNamesBothNumbers) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  std::string prompt;
  for (int i = 0; i < 200; ++i) prompt += "Once upon a time ";
  const auto r = run_cli({"run", "-m", model, "-p", prompt, "-c", "64"});
  expect_clean_error(r, "64");
  EXPECT_THAT(r.err, HasSubstr("context"));
}

TEST(Cli, CudaBackendRequestedWithoutCudaSaysWhy) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const auto r = run_cli({"run", "-m", model, "-p", "hi", "-n", "2", "--backend", "cuda"});
  if (r.exit_code == 0) GTEST_SKIP() << "a CUDA backend ran here";
  expect_clean_error(r, "CUDA");
}

TEST(Cli, UnknownCommandFailsWithUsage) {
  const auto r = run_cli({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command"));
}

}  // namespace
}  // namespace kvscope::test
