// kvscope-cli logprobs writes every position's log-probabilities as a .npy file: the rows are
// the engine's own (Engine::evaluate, log-softmax), and a bad id list is one clear error.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/cli_runner.h"
#include "cpu/cpu_ops.h"
#include "run/engine.h"
#include "support/test_data.h"

namespace kvscope::test {
namespace {

using ::testing::HasSubstr;

TEST(CliLogprobs, WritesEachPositionsLogSoftmaxOfTheEnginesLogitsAsNpy) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const std::string out = (scratch_dir() / "lp.npy").string();
  const auto r = run_cli({"logprobs", "-m", model, "--ids", "1,403,407,261", "-o", out, "-t", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wrote 4 x 512 log-probabilities"));

  std::ifstream in(out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 10u);
  ASSERT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header =
      10 + static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]);
  EXPECT_EQ(header % 64, 0u);
  EXPECT_THAT(bytes.substr(10, header - 10), HasSubstr("'shape': (4, 512)"));
  ASSERT_EQ(bytes.size(), header + 4 * 512 * sizeof(float));
  std::vector<float> got(4 * 512);
  std::memcpy(got.data(), bytes.data() + header, got.size() * sizeof(float));

  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  o.n_threads = 1;
  Engine engine(model, o);
  const std::vector<float> logits = engine.evaluate({1, 403, 407, 261});
  std::vector<float> want(512);
  for (std::size_t t = 0; t < 4; ++t) {
    log_softmax(std::span<const float>(logits).subspan(t * 512, 512), want);
    for (std::size_t i = 0; i < 512; ++i) EXPECT_EQ(got[t * 512 + i], want[i]) << t << " " << i;
  }
}

// --dump-layers: one .npy per layer, [tokens][dim], the residual stream the backend handed
// out after that layer; the last one is what the output norm reads, so its logits follow.
TEST(CliLogprobs, DumpLayersWritesTheResidualStreamAfterEveryLayer) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const std::filesystem::path dir = scratch_dir() / "layers";
  const std::string out = (scratch_dir() / "lp2.npy").string();
  const auto r = run_cli({"logprobs", "-m", model, "--ids", "1,403,407", "-o", out, "-t", "1",
                          "--dump-layers", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wrote 5 layers' residual streams"));
  std::vector<std::vector<float>> seen;
  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  o.n_threads = 1;
  o.cpu_layer_output = [&](std::int64_t, std::span<const float> x) {
    seen.emplace_back(x.begin(), x.end());
  };
  Engine engine(model, o);
  engine.evaluate({1, 403, 407});
  ASSERT_EQ(seen.size(), 5u);
  for (std::size_t layer = 0; layer < 5; ++layer) {
    std::ifstream in(dir / fmt::format("layer_{:02d}.npy", layer), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 10u) << layer;
    const std::size_t header =
        10 + static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]);
    EXPECT_THAT(bytes.substr(10, header - 10), HasSubstr("'shape': (3, 64)")) << layer;
    ASSERT_EQ(bytes.size(), header + seen[layer].size() * sizeof(float)) << layer;
    EXPECT_EQ(std::memcmp(bytes.data() + header, seen[layer].data(), bytes.size() - header), 0)
        << layer;
  }
}

TEST(CliLogprobs, ABadIdIsOneClearError) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const std::string out = (scratch_dir() / "bad.npy").string();
  for (const char* ids : {"1,,2", "1,x", "-3", ""}) {
    const auto r = run_cli({"logprobs", "-m", model, "--ids", ids, "-o", out});
    EXPECT_EQ(r.exit_code, 1) << ids;
    EXPECT_THAT(r.err, HasSubstr("--ids")) << ids;
  }
  const auto r = run_cli({"logprobs", "-m", model, "--ids", "1,100000", "-o", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("100000"));
}

}  // namespace
}  // namespace kvscope::test
