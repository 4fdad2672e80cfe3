// kvscope-cli run / chat sample with the model's generation_config.json values where no flag
// names one, say where they came from, and refuse a file with a bad value in one line.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli_runner.h"
#include "support/test_data.h"
#include "support/tiny_hf_folder.h"

namespace kvscope::test {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string tiny_folder(const json& generation_config) {
  const auto dir = scratch_dir() / "tiny-hf";
  write_tiny_hf_folder(dir, generation_config);
  return dir.string();
}

json run_json(const std::string& folder, std::vector<std::string> extra, CliResult* raw = nullptr) {
  std::vector<std::string> args = {"run", "-m", folder,   "-p",        "abc",
                                   "-n",  "4",  "--json", "--backend", "cpu"};
  args.insert(args.end(), extra.begin(), extra.end());
  const CliResult r = run_cli(args);
  if (raw) *raw = r;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? json::parse(r.out).at("sampling") : json();
}

TEST(CliSampling, FlagsNotGivenTakeTheModelsValues) {
  const auto folder = tiny_folder({{"do_sample", true}, {"temperature", 0.6}, {"top_p", 0.8}});
  CliResult r;
  const json s = run_json(folder, {}, &r);
  EXPECT_FLOAT_EQ(s.at("temperature").get<float>(), 0.6f);
  EXPECT_FLOAT_EQ(s.at("top_p").get<float>(), 0.8f);
  EXPECT_EQ(s.at("top_k"), 40);  // not in the file: KVScope's
  EXPECT_THAT(r.err, HasSubstr("note: sampling defaults from " + folder +
                               "/generation_config.json: do_sample true, temperature 0.6, "
                               "top_p 0.8"));

  const json flagged = run_json(folder, {"--temp", "0.25", "--top-k", "5"});
  EXPECT_FLOAT_EQ(flagged.at("temperature").get<float>(), 0.25f);
  EXPECT_EQ(flagged.at("top_k"), 5);
  EXPECT_FLOAT_EQ(flagged.at("top_p").get<float>(), 0.8f);  // still the model's
}

TEST(CliSampling, DoSampleFalseRunsGreedy) {
  const auto folder = tiny_folder({{"do_sample", false}, {"temperature", 0.9}});
  EXPECT_EQ(run_json(folder, {}).at("temperature"), 0.0);
}

TEST(CliSampling, AModelWithoutValuesUsesKvscopesDefaults) {
  CliResult r;
  const json s = run_json(tiny_folder(nullptr), {}, &r);
  EXPECT_FLOAT_EQ(s.at("temperature").get<float>(), 0.8f);
  EXPECT_EQ(s.at("top_k"), 40);
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("sampling defaults")));
}

TEST(CliSampling, BadValueIsOneLineNamingTheFileAndField) {
  const auto folder = tiny_folder({{"top_p", 1.5}});
  const CliResult r = run_cli({"run", "-m", folder, "-p", "abc", "-n", "1"});
  EXPECT_GT(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("kvscope-cli"));
  EXPECT_THAT(r.err, HasSubstr(folder + "/generation_config.json: top_p = 1.5: must be in [0, 1]"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("internal error")));
}

TEST(CliSampling, HelpSaysWhereTheDefaultsComeFrom) {
  for (const char* command : {"run", "chat"}) {
    const CliResult r = run_cli({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_THAT(r.out, HasSubstr("generation_config.json")) << command;
    EXPECT_THAT(r.out, HasSubstr("--top-p")) << command;
  }
}

}  // namespace
}  // namespace kvscope::test
