// `kvscope-cli simulate` end to end: it needs no model, prints one row per policy, its
// JSON figures are engine/sim's for the same trace and memory, and bad options end in one
// clear line on stderr.
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli_runner.h"
#include "sim/simulation.h"
#include "sim/trace/trace_presets.h"

namespace kvscope::test {
namespace {

using ::testing::HasSubstr;

void expect_one_error_line(const CliResult& r, const std::string& mentions) {
  EXPECT_GT(r.exit_code, 0) << "stdout: " << r.out << "\nstderr: " << r.err;
  int lines = 0;
  std::istringstream in(r.err);
  for (std::string line; std::getline(in, line);) lines += line.rfind("note:", 0) != 0;
  EXPECT_EQ(lines, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("kvscope-cli simulate"));
  EXPECT_THAT(r.err, HasSubstr(mentions));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("internal error")));
}

TEST(CliSimulate, ChatTablePrintsEveryPolicy) {
  const auto r = run_cli({"simulate", "--trace", "chat", "--requests", "60"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Trace chat: 60 requests"));
  EXPECT_THAT(r.out, HasSubstr("Memory 8192 token slots, max context 2048, paged blocks of 16"));
  EXPECT_THAT(r.out, HasSubstr("contiguous, reserve max context"));
  EXPECT_THAT(r.out, HasSubstr("contiguous, exact size (first fit)"));
  EXPECT_THAT(r.out, HasSubstr("\npaged "));
  EXPECT_THAT(r.out, HasSubstr("96.3%"));  // the paper's figure, quoted for comparison
}

TEST(CliSimulate, JsonFiguresAreTheEnginesSimulation) {
  const auto r =
      run_cli({"simulate", "--trace", "api-burst", "--capacity", "4096", "--block-size", "32",
               "--max-context", "512", "--requests", "50", "--seed", "9", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("config").at("capacity"), 4096);
  EXPECT_EQ(j.at("config").at("block_size"), 32);
  EXPECT_EQ(j.at("config").at("paged_blocks"), 128);
  EXPECT_EQ(j.at("trace").at("requests"), 50);

  TraceSpec spec = find_trace_preset("api-burst").spec;
  spec.n_requests = 50;
  spec.seed = 9;
  spec.max_context = 512;
  const SimulationResult want = run_simulation(generate_trace(spec), {4096, 32, 512});
  ASSERT_EQ(j.at("policies").size(), want.runs.size());
  for (std::size_t i = 0; i < want.runs.size(); ++i) {
    const auto& p = j.at("policies")[i];
    const SimSummary& s = want.runs[i].summary;
    SCOPED_TRACE(p.at("policy").get<std::string>());
    EXPECT_EQ(p.at("policy"), std::string(sim_policy_name(want.runs[i].policy)));
    EXPECT_DOUBLE_EQ(p.at("used_share").get<double>(), s.used_share());
    EXPECT_DOUBLE_EQ(p.at("internal_share").get<double>(), s.internal_share());
    EXPECT_DOUBLE_EQ(p.at("external_share").get<double>(), s.external_share());
    EXPECT_EQ(p.at("steps"), s.steps);
    EXPECT_EQ(p.at("finished"), 50);
    EXPECT_EQ(p.at("peak_running"), s.peak_running);
    EXPECT_EQ(p.at("preemptions"), s.preemptions);
    EXPECT_EQ(p.at("slot_steps").at("stored"), s.stored);
  }
  EXPECT_GT(j.at("policies")[2].at("used_share").get<double>(),
            j.at("policies")[0].at("used_share").get<double>());
}

TEST(CliSimulate, ListNamesThePresets) {
  const auto r = run_cli({"simulate", "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("chat"));
  EXPECT_THAT(r.out, HasSubstr("api-burst"));
  EXPECT_THAT(r.out, HasSubstr("long-documents"));
}

TEST(CliSimulate, BadOptionsEndInOneClearLine) {
  expect_one_error_line(run_cli({"simulate"}), "--trace");
  expect_one_error_line(run_cli({"simulate", "--trace", "poems"}),
                        "unknown trace 'poems' (known: chat, api-burst, long-documents)");
  expect_one_error_line(run_cli({"simulate", "--trace", "chat", "--block-size", "0"}),
                        "option --block-size: 0 is outside 1..256");
  expect_one_error_line(run_cli({"simulate", "--trace", "chat", "--block-size", "300"}),
                        "option --block-size: 300 is outside 1..256");
  expect_one_error_line(run_cli({"simulate", "--trace", "chat", "--capacity", "1000"}),
                        "max context 2048 exceeds the capacity of 1000");
  expect_one_error_line(run_cli({"simulate", "--trace", "chat", "--requests", "0"}),
                        "option --requests: 0 is outside 1..1000000");
  expect_one_error_line(run_cli({"simulate", "--trace", "chat", "--seed", "-1"}), "--seed");
  expect_one_error_line(run_cli({"simulate", "--trace", "chat", "--capacity", "lots"}),
                        "--capacity");
}

}  // namespace
}  // namespace kvscope::test
