// `kvscope-cli watch`: against the fixture dumps served by python3's http.server on
// loopback (with the planner's pool beside the server's), a refused port, an HTML page and a
// bad URL; and following `kvscope-cli serve` (stories260K) under a little load from curl.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "app/background_runner.h"
#include "app/cli_runner.h"
#include "engine/remote/remote_fixtures.h"
#include "support/test_data.h"

namespace kvscope::test {
namespace {

namespace fs = std::filesystem;

// python3 -m http.server on 127.0.0.1 serving `dir`; skips the test when python3 is missing.
struct StaticServer {
  explicit StaticServer(const fs::path& dir)
      : process({"python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory",
                 dir.string()}) {
    port = process.wait_for(std::regex(R"(port (\d+))"), 20).value_or("");
  }
  BackgroundProcess process;
  std::string port;
};

fs::path site() {
  const fs::path dir = scratch_dir();
  fs::copy_file(remote_fixture_dir() / "vllm_v1_2.prom", dir / "vllm_v1_2.prom");
  std::ofstream(dir / "login.html") << "<!DOCTYPE html><html><title>Sign in</title></html>\n";
  return dir;
}

int free_port() {
  // the static server's port, once it is stopped, is a port nothing listens on
  StaticServer s(scratch_dir());
  const int port = s.port.empty() ? 1 : std::stoi(s.port);
  s.process.stop();
  return port;
}

TEST(CliWatch, PrintsALinePerScrapeAndThePlannersPoolBesideTheServers) {
  StaticServer server(site());
  if (server.port.empty())
    GTEST_SKIP() << "needs python3 (http.server): " << server.process.output();
  const CliResult r =
      run_cli({"watch", "http://127.0.0.1:" + server.port + "/vllm_v1_2.prom", "--count", "2",
               "--interval", "0.2", "--model", "llama-3.1-8b", "--gpu", "rtx-3090"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("Planner: llama-3.1-8b on 1 x rtx-3090 at utilisation 0.90"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(Server: vLLM \(v1 metrics\), model meta-llama/Llama-3.1-8B-Instruct, )"
                        R"(KV pool 1,952 blocks x 16 = 31,232 tokens \(planner [\d,]+ tokens, )"
                        R"([+-]\d+\.\d%\))")))
      << r.out;
  // KV use, the planner's usage for the same tokens, running 24, waiting 5, 3 preemptions;
  // the same dump twice: no new prefix queries or first tokens, 0 tokens/s
  const std::regex line(R"(\n +\d+\.\ds +97\.2% +\d\d\.\d% +24 +5 +3 +- +0\.0 +- +-\n)");
  std::ptrdiff_t lines =
      std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), line), std::sregex_iterator());
  EXPECT_EQ(lines, 1) << r.out;  // the first line has no rates yet
}

// The server of vllm issue 10517 (vLLM 0.6.4, max_model_len 20,000) planned with that
// release's accounting: its 1,952 blocks within 2%.
TEST(CliWatch, PlansTheServersReleaseAndSaysTheDifferenceInPercent) {
  StaticServer server(site());
  if (server.port.empty())
    GTEST_SKIP() << "needs python3 (http.server): " << server.process.output();
  const CliResult r = run_cli({"watch", "http://127.0.0.1:" + server.port + "/vllm_v1_2.prom",
                               "--count", "1", "--model", "llama-3.1-8b", "--gpu", "rtx-3090",
                               "--ctx", "20000", "--vllm-version", "0.6.4"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.out, m, std::regex(R"(\(planner [\d,]+ tokens, ([+-]\d+\.\d)%\))")))
      << r.out;
  EXPECT_LT(std::abs(std::stod(m[1].str())), 2.0) << r.out;
}

TEST(CliWatch, SaysWhatIsWrongWithABadEndpointAndRetries) {
  StaticServer server(site());
  if (server.port.empty()) GTEST_SKIP() << "needs python3 (http.server)";
  const CliResult html = run_cli({"watch", "http://127.0.0.1:" + server.port + "/login.html",
                                  "--count", "2", "--interval", "0.1"});
  EXPECT_EQ(html.exit_code, 1);
  EXPECT_NE(html.out.find("not metrics: an HTML page, not metrics (starts '<!DOCTYPE html>"),
            std::string::npos)
      << html.out;
  EXPECT_NE(html.out.find("(retrying)"), std::string::npos) << html.out;
  EXPECT_NE(html.err.find("no scrape of http://127.0.0.1:" + server.port + "/login.html succeeded"),
            std::string::npos)
      << html.err;
  const CliResult missing =
      run_cli({"watch", "127.0.0.1:" + server.port + "/nothing", "--count", "1"});
  EXPECT_NE(missing.out.find("HTTP error: HTTP 404"), std::string::npos) << missing.out;

  const std::string port = std::to_string(free_port());
  const CliResult refused =
      run_cli({"watch", "http://127.0.0.1:" + port, "--count", "2", "--interval", "0.1"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.out.find("refused: connection refused: nothing listens at 127.0.0.1:" + port),
            std::string::npos)
      << refused.out;

  const CliResult bad = run_cli({"watch", "https://127.0.0.1:8000"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("only http:// is supported"), std::string::npos) << bad.err;
  EXPECT_EQ(run_cli({"watch", "h:1", "--model", "llama-3.1-8b"}).exit_code, 1);  // no --gpu
}

TEST(CliWatch, FollowsKvscopeServeUnderLoad) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  BackgroundProcess server({(binary_dir() / "bin" / "kvscope-cli").string(), "serve", "-m", model,
                            "--port", "0", "-np", "2", "-t", "1"});
  const auto port = server.wait_for(std::regex(R"(listening on http://127\.0\.0\.1:(\d+))"), 60);
  ASSERT_TRUE(port) << server.output();
  const std::string base = "http://127.0.0.1:" + *port;
  std::vector<std::unique_ptr<BackgroundProcess>> load;
  // Each client sends requests one after another for as long as the watch runs: one batch of
  // four was over (stories260K answers in milliseconds) before a slow-starting watch scraped.
  const std::string one_request =
      "curl -s -o /dev/null -m 60 -H 'Content-Type: application/json' -d "
      R"('{"model":"stories260K","prompt":"Once upon a time","max_tokens":200,"temperature":0}' )" +
      base + "/v1/completions";
  for (int i = 0; i < 4; ++i) {
    load.push_back(std::make_unique<BackgroundProcess>(std::vector<std::string>{
        "sh", "-c", "for i in $(seq 100); do " + one_request + " || exit; done"}));
  }
  const CliResult r = run_cli({"watch", base, "--count", "10", "--interval", "0.3"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("Server: KVScope, model stories260K"), std::string::npos) << r.out;
  // At least one scrape saw requests running or queued, and one saw tokens being generated.
  const std::regex row(R"(\n +[\d.]+s +(\S+) +(\d+) +(\d+) +(\d+) +(\S+) +(\S+) )");
  bool busy = false;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), row);
       it != std::sregex_iterator(); ++it) {
    busy = busy || std::stoi((*it)[2]) + std::stoi((*it)[3]) > 0;
  }
  EXPECT_TRUE(busy) << r.out;
  for (auto& p : load) p->stop();
  server.stop();
}

}  // namespace
}  // namespace kvscope::test
