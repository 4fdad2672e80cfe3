// Where kvscope-cli's output goes wrong for reasons outside the model's maths: names read from
// files that are not UTF-8 (printed as JSON), standard output on a full disk, a snapshot or a
// layer dump aimed at something that is not a regular file, a perplexity context too short to
// score a token. Each ends in an answer or one clear error, never an "internal error" or a
// success that lost its output.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli_runner.h"
#include "model/synthetic_model.h"
#include "support/test_data.h"
#include "support/tiny_llama_spec.h"

namespace kvscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// "caf\xE9" is Latin-1, not UTF-8: a name such as a converter on Windows may write.
constexpr const char* kLatin1Name = "caf\xE9 model";

std::string latin1_named_model() {
  const std::string path = (scratch_dir() / "latin1.gguf").string();
  write_synthetic_gguf(path, tiny_llama_spec(kLatin1Name, 64), TensorType::F32, 7);
  return path;
}

void expect_clean_failure(const CliResult& r) {
  EXPECT_GT(r.exit_code, 0) << r.err;
  EXPECT_LT(r.exit_code, 128) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
}

TEST(CliOutputEdges, BenchJsonOfAModelWhoseNameIsNotUtf8IsPrinted) {
  const auto r = run_cli({"bench", "-m", latin1_named_model(), "-p", "4", "-n", "2", "-r", "1",
                          "-t", "1", "--backend", "cpu", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out.at("model").get<std::string>(), "caf\xEF\xBF\xBD model");  // U+FFFD
}

TEST(CliOutputEdges, ModelsJsonListsAFileWhoseNameIsNotUtf8) {
  const fs::path home = scratch_dir();
  const fs::path dir = home / ".cache/kvscope/models";
  fs::create_directories(dir);
  fs::copy_file(latin1_named_model(), dir / "caf\xE9.gguf");
  const auto r = run_cli({"models", "--home", home.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  ASSERT_EQ(out.at("models").size(), 1u) << r.out;
  EXPECT_EQ(out.at("models")[0].at("name").get<std::string>(), "caf\xEF\xBF\xBD.gguf");
}

TEST(CliOutputEdges, PlanJsonOfAFileWhoseNameIsNotUtf8IsPrinted) {
  const fs::path path = scratch_dir() / "caf\xE9.gguf";
  fs::copy_file(latin1_named_model(), path);
  const auto r = run_cli({"plan", "-m", path.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(json::parse(r.out).at("model").get<std::string>(), HasSubstr("caf\xEF\xBF\xBD"));
}

// general.name is shown as text: an escape sequence in it (set the terminal's title, ring the
// bell) is printed as \x1b...\x07, not sent to the terminal.
TEST(CliOutputEdges, InspectShowsAModelNameWithoutItsControlBytes) {
  const std::string path = (scratch_dir() / "title.gguf").string();
  write_synthetic_gguf(path, tiny_llama_spec("\x1b]0;pwned\x07tiny", 64), TensorType::F32, 7);
  const auto r = run_cli({"inspect", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"\\x1b]0;pwned\\x07tiny\""));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

TEST(CliOutputEdges, StandardOutputOnAFullDiskIsAnError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const auto r = run_cli_to({"inspect", model, "--json"}, "/dev/full");
  expect_clean_failure(r);
  EXPECT_THAT(r.err, HasSubstr("cannot write the output"));
}

TEST(CliOutputEdges, SnapshotIntoAFifoWritesThroughItAndLeavesItAFifo) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const fs::path fifo = scratch_dir() / "snapshot.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A reader holds the FIFO open, so the CLI's open does not wait; the snapshot (a few KB)
  // fits the pipe's buffer until the test reads it.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const auto r = run_cli({"run", "-m", model, "-p", "Once", "-n", "2", "-t", "1", "--backend",
                          "cpu", "--snapshot", fifo.string()},
                         60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_fifo(fifo)) << "the snapshot replaced the FIFO with a file";
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(reader, buf, sizeof buf)) > 0;) got.append(buf, std::size_t(n));
  ::close(reader);
  ASSERT_FALSE(got.empty());
  EXPECT_TRUE(json::accept(got)) << got.substr(0, 200);
}

TEST(CliOutputEdges, LayerDumpOntoAFileIsOneClearError) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const fs::path file = scratch_dir() / "not_a_dir";
  std::ofstream(file) << "x";
  const auto r = run_cli({"logprobs", "-m", model, "--ids", "1,2", "-o",
                          (scratch_dir() / "lp.npy").string(), "--dump-layers", file.string()});
  expect_clean_failure(r);
  EXPECT_THAT(r.err, HasSubstr("--dump-layers"));
}

TEST(CliOutputEdges, PerplexityContextOfTwoScoresNoTokenAndSaysSo) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const fs::path text = scratch_dir() / "text.txt";
  std::ofstream(text) << "Once upon a time, there was a little girl named Lily.";
  const auto r = run_cli({"perplexity", "-m", model, "-f", text.string(), "-c", "2"});
  expect_clean_failure(r);
  EXPECT_THAT(r.err, HasSubstr("option -c: 2"));
  EXPECT_THAT(r.out, Not(HasSubstr("nan")));
}

}  // namespace
}  // namespace kvscope::test
