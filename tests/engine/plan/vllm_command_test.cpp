#include "plan/vllm_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(VllmCommand, ALocalPathIsShellQuotedAndPythonEscaped) {
  VllmArgs a;
  a.model = "/models/my model's \"dir\"";
  a.max_model_len = 4096;
  EXPECT_THAT(vllm_serve_command(a), HasSubstr("vllm serve '/models/my model'\\''s \"dir\"' \\\n"));
  EXPECT_THAT(vllm_python_call(a), HasSubstr("LLM(model=\"/models/my model's \\\"dir\\\"\", "));
  a.model = "Qwen/Qwen2.5-7B";
  EXPECT_THAT(vllm_serve_command(a), HasSubstr("vllm serve Qwen/Qwen2.5-7B \\\n"));
}

TEST(VllmCommand, EverySettingOfThePlanIsOnTheCommandLine) {
  VllmArgs a;
  a.model = "meta-llama/Llama-3.1-8B";
  a.tensor_parallel_size = 2;
  a.pipeline_parallel_size = 3;
  a.max_model_len = 16384;
  a.max_num_seqs = 48;
  a.gpu_memory_utilization = 0.85;
  a.kv_cache_dtype = ServingKvDtype::Fp8;
  a.block_size = 32;
  a.swap_space_gib = 7;
  const std::string cmd = vllm_serve_command(a);
  for (const char* part :
       {"--tensor-parallel-size 2", "--pipeline-parallel-size 3", "--max-model-len 16384",
        "--max-num-seqs 48", "--gpu-memory-utilization 0.85", "--kv-cache-dtype fp8",
        "--block-size 32", "--swap-space 7\n"}) {
    EXPECT_THAT(cmd, HasSubstr(part));
  }
  EXPECT_EQ(vllm_python_call(a),
            "LLM(model=\"meta-llama/Llama-3.1-8B\", tensor_parallel_size=2, "
            "pipeline_parallel_size=3, max_model_len=16384, max_num_seqs=48, "
            "gpu_memory_utilization=0.85, kv_cache_dtype=\"fp8\", block_size=32, swap_space=7)\n");
}

// No swap space set (vLLM's default, or a V1 release that never swaps): no flag, no argument.
TEST(VllmCommand, AnUnsetSwapSpaceIsNotWritten) {
  VllmArgs a;
  a.model = "meta-llama/Llama-3.1-8B";
  a.max_model_len = 8192;
  EXPECT_THAT(vllm_serve_command(a), Not(HasSubstr("swap")));
  EXPECT_THAT(vllm_python_call(a), Not(HasSubstr("swap")));
  EXPECT_THAT(vllm_serve_command(a), HasSubstr("  --block-size 16\n"));
}

}  // namespace
}  // namespace kvscope
