// `kvscope-cli bench-attention` end to end: one row per (context, dtype), the bytes a call
// reads are every visible block's K and V bytes of one layer (checked against the block
// sizes worked out by hand from kv_format.h), the block table really is shuffled, the
// derived figures follow from the measured ones, and CUDA without a GPU is one clear line.
#include <cmath>
#include <cstdint>
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

// Bytes of one block of one layer at 2 KV heads, head_dim 16, 16 slots (kv_format.h):
//   f16   K, V: 16 x 2 bytes                          -> 16 slots x 2 heads x 64 = 2048
//   int8  K, V: 16 data + 1 fp16 scale (group 16)     -> 16 x 2 x 36             = 1152
//   int4  K: 8 data + 2 groups of 8 x (s, m) fp16 = 16; V: 8 data + 1 scale = 10
//         -> 16 x 2 x 26 = 832, plus the K offsets 2 heads x 16 fp16 = 64       =  896
std::int64_t block_bytes(const std::string& dtype) {
  if (dtype == "f16") return 2048;
  if (dtype == "int8") return 1152;
  if (dtype == "int4") return 896;
  ADD_FAILURE() << "unexpected dtype " << dtype;
  return 0;
}

const std::vector<std::string> kSmall = {
    "bench-attention", "--contexts", "64,256", "--heads", "4",  "--kv-heads", "2",
    "--head-dim",      "16",         "-r",     "2",       "-t", "1",          "--json"};

void expect_results(const nlohmann::json& j) {
  EXPECT_EQ(j.at("n_heads"), 4);
  EXPECT_EQ(j.at("n_kv_heads"), 2);
  EXPECT_EQ(j.at("head_dim"), 16);
  EXPECT_EQ(j.at("block_size"), 16);
  EXPECT_EQ(j.at("repetitions"), 2);
  const double copy = j.at("copy_bandwidth_gb_s").get<double>();
  EXPECT_GT(copy, 0.1);
  const auto& rows = j.at("results");
  ASSERT_EQ(rows.size(), 6u);  // contexts outer, dtypes inner
  const std::vector<std::int64_t> contexts = {64, 64, 64, 256, 256, 256};
  const std::vector<std::string> dtypes = {"f16", "int8", "int4", "f16", "int8", "int4"};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r.at("context"), contexts[i]);
    EXPECT_EQ(r.at("dtype"), dtypes[i]);
    const std::int64_t blocks = contexts[i] / 16;
    EXPECT_EQ(r.at("blocks"), blocks);
    EXPECT_EQ(r.at("block_bytes_per_layer"), block_bytes(dtypes[i]));
    EXPECT_EQ(r.at("bytes_read"), blocks * block_bytes(dtypes[i]));
    EXPECT_GT(r.at("out_of_order_blocks").get<std::int64_t>(), 0) << "block table in order";
    EXPECT_TRUE(r.at("output_finite").get<bool>());
    EXPECT_GT(r.at("cache_flush_bytes").get<std::int64_t>(), 0);
    ASSERT_EQ(r.at("samples_us").size(), 2u);
    const double us = r.at("us_per_call").get<double>();
    EXPECT_GT(us, 0.0);
    EXPECT_DOUBLE_EQ(
        us, 0.5 * (r.at("samples_us")[0].get<double>() + r.at("samples_us")[1].get<double>()));
    const double gb_s = r.at("achieved_gb_s").get<double>();
    EXPECT_NEAR(gb_s, static_cast<double>(blocks * block_bytes(dtypes[i])) / us / 1e3, 1e-9 * gb_s);
    EXPECT_NEAR(r.at("bandwidth_fraction").get<double>(), gb_s / copy, 1e-12);
    const double f16_us = rows[i - i % 3].at("us_per_call").get<double>();
    EXPECT_NEAR(r.at("speedup_vs_f16").get<double>(), f16_us / us, 1e-9 * f16_us / us);
  }
}

TEST(CliBenchAttention, CpuReportsEveryContextAndDtypeWithTheBytesEachCallReads) {
  const CliResult r = run_cli(kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("backend"), "cpu");
  EXPECT_EQ(j.at("threads"), 1);
  expect_results(j);
}

TEST(CliBenchAttention, WithoutF16ThereIsNoSpeedUpToReport) {
  const CliResult r =
      run_cli({"bench-attention", "--contexts", "40", "--dtypes", "int8", "--heads", "2",
               "--kv-heads", "1", "--head-dim", "8", "--block-size", "7", "-r", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto row = nlohmann::json::parse(r.out).at("results").at(0);
  EXPECT_TRUE(row.at("speedup_vs_f16").is_null());
  EXPECT_EQ(row.at("blocks"), 6);  // ceil(40 / 7): a partly filled tail block is read too
  // 1 KV head, head_dim 8: int8 K and V are 8 data + 1 scale bytes each: 7 x 20
  EXPECT_EQ(row.at("bytes_read"), 6 * 140);
}

TEST(CliBenchAttention, TextTableHasOneLinePerContextAndDtype) {
  const CliResult r = run_cli({"bench-attention", "--contexts", "32,48", "--dtypes", "f16,int4",
                               "--heads", "2", "--kv-heads", "2", "--head-dim", "8", "-r", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("shuffled block table"));
  EXPECT_THAT(r.out, HasSubstr("copy bandwidth"));
  int rows = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    rows += line.rfind("f16 ", 0) == 0 || line.rfind("int4 ", 0) == 0;
  }
  EXPECT_EQ(rows, 4);
  EXPECT_THAT(r.out, HasSubstr("1.00x"));
}

void expect_one_error_line(const CliResult& r, const std::string& mentions) {
  EXPECT_GT(r.exit_code, 0) << "stdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  int lines = 0;
  std::istringstream in(r.err);
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("kvscope-cli bench-attention"));
  EXPECT_THAT(r.err, HasSubstr(mentions));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("internal error")));
}

// On a machine with a GPU the same run must give the same checks on the device.
TEST(CliBenchAttention, CudaWithoutAGpuIsOneLineSayingWhy) {
  std::vector<std::string> args = kSmall;
  args.insert(args.begin() + 1, {"--backend", "cuda"});
  const CliResult r = run_cli(args);
  if (r.exit_code == 0) {
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("backend"), "cuda");
    expect_results(j);
    for (const auto& row : j.at("results")) {
      EXPECT_GE(row.at("n_splits").get<int>(), 1);
      EXPECT_LT(row.at("max_abs_diff_vs_cpu").get<double>(), 1e-2) << row.dump();
    }
    return;
  }
  expect_one_error_line(r, "CUDA unavailable");
}

TEST(CliBenchAttention, BadOptionsAreOneLineNamingTheOption) {
  expect_one_error_line(run_cli({"bench-attention", "--contexts", "64,x"}), "--contexts");
  expect_one_error_line(run_cli({"bench-attention", "--contexts", "0"}), "--contexts");
  expect_one_error_line(run_cli({"bench-attention", "--dtypes", "f8"}), "f8");
  expect_one_error_line(run_cli({"bench-attention", "--heads", "6", "--kv-heads", "4"}),
                        "--kv-heads 4");
  expect_one_error_line(run_cli({"bench-attention", "--backend", "tpu"}), "--backend");
  expect_one_error_line(run_cli({"bench-attention", "-r", "0"}), "-r");
}

}  // namespace
}  // namespace kvscope::test
