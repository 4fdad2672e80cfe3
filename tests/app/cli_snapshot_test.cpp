// kvscope-cli run --snapshot F: the KV cache after the reply in the app's panel snapshot
// format (kv/panel_snapshot_json.h), whose numbers agree with one another and with the
// request; a path that cannot be written is one clear error.
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli_runner.h"
#include "support/test_data.h"

namespace kvscope::test {
namespace {

TEST(CliSnapshot, RunWritesThePanelSnapshotOfTheKeptReply) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const std::string path = (scratch_dir() / "run-snapshot.json").string();
  const auto r = run_cli({"run", "-m", model, "-p", "Once upon a time", "-n", "20", "--temp", "0",
                          "--json", "--backend", "cpu", "--snapshot", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("format"), "kvscope-panel-snapshot");
  EXPECT_EQ(j.at("model"), "stories260K.gguf");
  ASSERT_EQ(j.at("sequences").size(), 1u);
  const std::int64_t tokens = j.at("sequences")[0].at("n_tokens");
  const std::int64_t asked = out.at("prompt_ids").size() + out.at("generated_ids").size();
  EXPECT_GE(tokens, asked - 1);  // the last sampled token need not be in the cache yet
  EXPECT_LE(tokens, asked);
  const auto& t = j.at("totals");
  const std::int64_t block = j.at("block_size");
  EXPECT_EQ(t.at("filled_slots"), tokens * static_cast<std::int64_t>(j.at("groups").size()));
  EXPECT_EQ(t.at("n_used"), (tokens + block - 1) / block * j.at("groups").size());
  EXPECT_EQ(t.at("n_used").get<std::int64_t>() + t.at("n_free").get<std::int64_t>(),
            t.at("n_blocks").get<std::int64_t>());
  EXPECT_GT(j.at("memory").at("weights").get<std::int64_t>(), 0);
  EXPECT_GT(j.at("memory").at("kv_pool").get<std::int64_t>(), 0);
}

TEST(CliSnapshot, AnUnwritablePathIsOneClearError) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const auto r = run_cli({"run", "-m", model, "-p", "Hi", "-n", "2", "--backend", "cpu",
                          "--snapshot", "/nonexistent-dir/x.json"});
  EXPECT_GT(r.exit_code, 0);
  EXPECT_THAT(r.err, ::testing::HasSubstr("--snapshot"));
  EXPECT_THAT(r.err, ::testing::HasSubstr("/nonexistent-dir/x.json"));
}

}  // namespace
}  // namespace kvscope::test
