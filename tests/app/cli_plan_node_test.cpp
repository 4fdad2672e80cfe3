// kvscope-cli plan on a node (--tp / --pp / --emit vllm) and with no memory given, end to end.
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli_runner.h"

namespace kvscope::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void expect_one_line_error(const CliResult& r, const std::string& mentions) {
  EXPECT_GT(r.exit_code, 0) << "stdout: " << r.out << "\nstderr: " << r.err;
  int lines = 0;
  std::istringstream in(r.err);
  for (std::string line; std::getline(in, line);) lines += line.rfind("note:", 0) != 0;
  EXPECT_EQ(lines, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(mentions));
  EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
}

TEST(CliPlanNode, NoMemoryGivenPrintsWhatLlama7bNeedsAt2048Tokens) {
  // 32 layers x 2 (K, V) x 4096 x 2 bytes x 2048 tokens
  const std::int64_t expected = std::int64_t{32} * 2 * 4096 * 2 * 2048;
  ASSERT_EQ(expected, 1'073'741'824);
  const auto text = run_cli({"plan", "--model", "llama-7b", "--ctx", "2048"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("KV 1,073,741,824"));
  EXPECT_THAT(text.out, HasSubstr("32 KV heads x (K 128 x 2 B + V 128 x 2 B) = 16,384 B"));
  EXPECT_THAT(text.out, Not(HasSubstr("fits")));
  const auto js = run_cli({"plan", "--model", "llama-7b", "--ctx", "2048", "--json"});
  ASSERT_EQ(js.exit_code, 0) << js.err;
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j.at("kv_bytes"), expected);
  EXPECT_EQ(j.at("total_bytes").get<std::int64_t>(),
            j.at("weights_bytes").get<std::int64_t>() +
                j.at("workspace_bytes").get<std::int64_t>() + expected);
}

TEST(CliPlanNode, TensorParallelPlanPrintsEachGpusBreakdown) {
  const auto r = run_cli({"plan", "--model", "llama-3.1-70b", "--gpu", "h100-80gb", "--tp", "4",
                          "--ctx", "32768", "--batch", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("tensor parallel 4 x pipeline parallel 1 = 4 GPUs"));
  EXPECT_THAT(r.out, HasSubstr("KV heads per GPU = max(1, 8 / 4) = 2"));
  // 2 KV heads x 2 x 128 x 2 B per token per layer; blocks of 16 tokens x 80 layers
  EXPECT_THAT(r.out, HasSubstr("= 1,024 B"));
  EXPECT_THAT(r.out, HasSubstr("one block = 16 tokens x 80 layers x 1,024 B = 1,310,720 B"));
  EXPECT_THAT(r.out, HasSubstr("64 sequences x 2,048 blocks x 1,310,720 B"));
  EXPECT_THAT(r.out, HasSubstr("longest max_model_len for 64 sequences"));
  EXPECT_THAT(r.out, HasSubstr("smallest node of this GPU that fits"));
}

TEST(CliPlanNode, JsonNodePlanAddsUpAndFp8HoldsTwiceTheTokens) {
  const auto r = run_cli({"plan", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--tp", "2",
                          "--pp", "3", "--ctx", "4096", "--batch", "8", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("stages").size(), 3u);
  std::int64_t node = 0;
  std::int64_t layers = 0;
  for (const auto& s : j.at("stages")) {
    node += 2 * s.at("total_bytes").get<std::int64_t>();
    layers += s.at("n_layers").get<std::int64_t>();
  }
  EXPECT_EQ(layers, 80);
  EXPECT_EQ(j.at("stages")[2].at("n_layers"), 26);  // 27, 27, 26
  EXPECT_EQ(j.at("node_bytes").get<std::int64_t>(), node);
  const auto auto_tokens = j.at("kv_tokens_auto").get<std::int64_t>();
  const auto fp8_tokens = j.at("kv_tokens_fp8").get<std::int64_t>();
  EXPECT_GE(fp8_tokens, 2 * auto_tokens);
  EXPECT_LE(fp8_tokens, 2 * auto_tokens + 16);
}

TEST(CliPlanNode, EmitVllmPrintsTheServeCommandAndTheLlmCall) {
  const auto r =
      run_cli({"plan", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--tp", "4", "--ctx", "8192",
               "--batch", "32", "--util", "0.92", "--kv-cache-dtype", "fp8", "--emit", "vllm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The latest release (V1) never swaps: no --swap-space (engine/plan/vllm_swap.h).
  EXPECT_THAT(r.out, HasSubstr("vllm serve meta-llama/Meta-Llama-3-70B \\\n"
                               "  --tensor-parallel-size 4 \\\n"
                               "  --pipeline-parallel-size 1 \\\n"
                               "  --max-model-len 8192 \\\n"
                               "  --max-num-seqs 32 \\\n"
                               "  --gpu-memory-utilization 0.92 \\\n"
                               "  --kv-cache-dtype fp8 \\\n"
                               "  --block-size 16\n"));
  EXPECT_THAT(r.out,
              HasSubstr("LLM(model=\"meta-llama/Meta-Llama-3-70B\", tensor_parallel_size=4, "
                        "pipeline_parallel_size=1, max_model_len=8192, max_num_seqs=32, "
                        "gpu_memory_utilization=0.92, kv_cache_dtype=\"fp8\", block_size=16)"));
  EXPECT_THAT(r.out, HasSubstr("# swap space: no --swap-space"));
  EXPECT_THAT(r.out, Not(HasSubstr("swap_space=")));
  EXPECT_THAT(r.out, Not(HasSubstr("does not fit")));
}

// Issue #41's server under 0.6.4 (V0 swaps requests of several sequences, recomputes those
// of one). By default every request is one sequence, as `vllm serve`'s clients send n = 1:
// vLLM's default swap space, and the text says what n > 1 would need. --preempt N sizes it
// for N sequences swapped at once, at most the 255 of 20,000 tokens vLLM's pool of 1,952
// blocks cannot hold: 255 x 1,250 blocks x 2 MiB = 622.6 GiB (--swap-space 623).
TEST(CliPlanNode, EmitVllmSwapSpaceUnderV0IsWhatThePoolCannotHold) {
  const std::vector<std::string> base = {
      "plan",    "--model", "llama-3.1-8b", "--gpu", "rtx-3090",       "--ctx", "20000",
      "--batch", "256",     "--emit",       "vllm",  "--vllm-version", "0.6.4"};
  const auto plain = run_cli(base);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_THAT(plain.out, Not(HasSubstr("--swap-space")));
  EXPECT_THAT(plain.out, Not(HasSubstr("swap_space=")));
  EXPECT_THAT(plain.out, HasSubstr("# swap space: vLLM's default 4 GiB per GPU"));
  EXPECT_THAT(plain.out, HasSubstr("up to 255 such sequences of 20,000 tokens"));
  std::vector<std::string> all = base;
  all.insert(all.end(), {"--preempt", "256"});
  const auto every = run_cli(all);
  ASSERT_EQ(every.exit_code, 0) << every.err;
  EXPECT_THAT(every.out, HasSubstr("  --swap-space 623\n"));
  EXPECT_THAT(every.out, HasSubstr("block_size=16, swap_space=623)"));
  EXPECT_THAT(every.out, HasSubstr("# swap space: 255 sequences of 20,000 tokens"));
  EXPECT_THAT(every.out, HasSubstr("# vLLM pins it at start-up and refuses it above 70%"));
  std::vector<std::string> few = base;
  few.insert(few.end(), {"--preempt", "3"});
  const auto three = run_cli(few);
  ASSERT_EQ(three.exit_code, 0) << three.err;
  EXPECT_THAT(three.out, HasSubstr("  --swap-space 8\n"));  // 3 x 1,250 x 2 MiB = 7.3 GiB
}

// vLLM's own accounting above the command (engine/plan/vllm_memory.h): Llama-3.1-8B on an RTX
// 3090 at 0.90 with max_model_len 20,000, as vLLM 0.6.4 logged it in vllm issue 10517 ("# GPU
// blocks: 1952", "Maximum concurrency for 20000 tokens per request: 1.56x").
TEST(CliPlanNode, EmitVllmWritesOutVllmsOwnKvPool) {
  const auto r = run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "rtx-3090", "--ctx", "20000",
                          "--batch", "256", "--emit", "vllm", "--vllm-version", "0.6.4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line :
       {"#   budget", "#   weights", "#   non-torch", "#   activation", "#   KV cache",
        "#   GPU blocks", "# largest max_model_len that starts"}) {
    EXPECT_THAT(r.out, HasSubstr(line));
  }
  EXPECT_THAT(r.out, HasSubstr("# KV cache 31,232 tokens (1,952 blocks of 16); maximum "
                               "concurrency for 20,000 tokens per request: 1.56x"));
}

TEST(CliPlanNode, EmitVllmWithAConcurrencyAddsTheFlagsThatGiveIt) {
  const auto r = run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--ctx", "8192",
                          "--batch", "256", "--emit", "vllm", "--concurrency", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# 4 requests of 8,192 tokens need 32,768 tokens of KV"));
  EXPECT_THAT(r.out, HasSubstr("  --max-num-seqs 4 \\\n"));
  EXPECT_THAT(r.out, HasSubstr("  --kv-cache-memory 4294967296\n"));  // 2,048 blocks x 2 MiB
}

TEST(CliPlanNode, BadNodeOptionsAreOneClearLine) {
  const std::vector<std::string> base = {"plan", "--model", "llama-3-70b", "--gpu", "h100-sxm"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  expect_one_line_error(with({"--tp", "3"}), "does not divide the model's 64 attention heads");
  expect_one_line_error(with({"--tp", "4", "--pp", "4"}), "more than the node's 8");
  expect_one_line_error(with({"--tp", "4", "--gpus", "2"}), "more than the node's 2");
  expect_one_line_error(with({"--tp", "16"}), "tp 16 exceeds the 8 GPUs");
  expect_one_line_error(with({"--tp", "2", "--kv-cache-dtype", "fp4"}), "fp4");
  expect_one_line_error(with({"--emit", "sglang"}), "expected vllm");
  expect_one_line_error(with({"--tp", "2", "-ctk", "int8"}), "--kv-cache-dtype");
  expect_one_line_error(run_cli({"plan", "--model", "llama-3-70b", "--tp", "2"}),
                        "--gpu NAME or --vram SIZE");
}

}  // namespace
}  // namespace kvscope::test
