// kvscope-cli given files that are not what they should be (issue #38, items 5 and 6): a FIFO
// or a device where a model shard or a text belongs, a text too big to score, a baseline
// that is no baseline or cannot be written, a context no machine holds. Each ends in a clear
// error and exit status 1, in seconds: every run that could block has a time limit.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli_runner.h"
#include "model/safetensors_file.h"
#include "support/test_data.h"
#include "support/tiny_hf_folder.h"

namespace kvscope::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kLimit = 30;  // seconds; each run here takes well under one

// 56 tokens of stories260K with BOS: 3 chunks of 16.
constexpr const char* kText =
    "Once upon a time, there was a little girl named Lily. She loved to go for a walk in the "
    "park and play with her mommy. One day, Lily went for a walk with a big dog.";

std::string write_text() {
  const auto path = scratch_dir() / "text.txt";
  std::ofstream(path) << kText;
  return path.string();
}

fs::path make_fifo(const fs::path& path) {
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
  return path;
}

void expect_refused(const CliResult& r, const std::string& mentions) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(mentions));
}

TEST(CliFileInputs, InspectOfAFolderWhoseIndexNamesAFifoEndsWithAnError) {
  const fs::path folder = scratch_dir() / "model";
  write_tiny_hf_folder(folder);
  const auto header = SafetensorsFile::read_header((folder / "model.safetensors").string());
  nlohmann::json map = nlohmann::json::object();
  for (const auto& t : header.tensors()) map[t.name] = "model.safetensors";
  map[header.tensors().front().name] = "model-00002-of-00002.safetensors";
  std::ofstream(folder / "model.safetensors.index.json") << nlohmann::json{{"weight_map", map}};
  make_fifo(folder / "model-00002-of-00002.safetensors");
  const std::string shard =
      "model-00002-of-00002.safetensors: cannot open (not a regular file "
      "(a FIFO))";
  expect_refused(run_cli({"inspect", folder.string()}, kLimit), shard);
  expect_refused(run_cli({"run", "-m", folder.string(), "-p", "hi", "-n", "1"}, kLimit), shard);
}

TEST(CliFileInputs, PerplexityRefusesADeviceOrAFifoAsItsText) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const fs::path fifo = make_fifo(scratch_dir() / "text.fifo");
  expect_refused(run_cli({"perplexity", "-m", model, "-f", fifo.string(), "-c", "16"}, kLimit),
                 "text.fifo: cannot read the text file (not a regular file (a FIFO))");
  // /dev/null, not /dev/zero: a regression must not read without end in CI (`perplexity -f
  // /dev/zero` took 4.8 GB in 10 s before the fix); /dev/null is a device all the same.
  if (fs::exists("/dev/null")) {
    expect_refused(run_cli({"perplexity", "-m", model, "-f", "/dev/null", "-c", "16"}, kLimit),
                   "/dev/null: cannot read the text file (not a regular file (a character "
                   "device))");
  }
}

TEST(CliFileInputs, PerplexityRefusesATextOverItsCapSayingSo) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const fs::path big = scratch_dir() / "big.txt";
  std::ofstream(big).close();
  fs::resize_file(big, (std::uintmax_t{64} << 20) + 1);  // sparse: no disk, no time
  expect_refused(run_cli({"perplexity", "-m", model, "-f", big.string(), "-c", "16"}, kLimit),
                 "big.txt: 67108865 bytes is over the 64 MiB a text to score may have");
}

TEST(CliFileInputs, SaveBaselineIntoAMissingFolderFailsNamingPathAndReason) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const std::string missing = (scratch_dir() / "no-such-dir" / "b.bin").string();
  const auto r = run_cli({"perplexity", "-m", model, "-f", write_text(), "-c", "16", "-t", "1",
                          "--save-baseline", missing},
                         kLimit);
  expect_refused(r, missing + ": cannot write the baseline (No such file or directory)");
  EXPECT_THAT(r.out, Not(HasSubstr("PPL")));
}

TEST(CliFileInputs, BaselineThatIsNotOneOrIsForAnotherRunIsRefused) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const std::string text = write_text();
  const auto r = run_cli(
      {"perplexity", "-m", model, "-f", text, "-c", "16", "-t", "1", "--baseline", model}, kLimit);
  expect_refused(r, "stories260K.gguf: not a perplexity baseline (no KVSPPLB1 header)");
  EXPECT_THAT(r.out, Not(HasSubstr("mean KL")));

  const std::string base = (scratch_dir() / "base.bin").string();
  const auto saved = run_cli(
      {"perplexity", "-m", model, "-f", text, "-c", "16", "-t", "1", "--save-baseline", base},
      kLimit);
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  const auto same = run_cli(
      {"perplexity", "-m", model, "-f", text, "-c", "16", "-t", "1", "--baseline", base}, kLimit);
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(number_after(same.out, "mean KL"), 0.0);
  EXPECT_EQ(number_after(same.out, "top-1 agreement"), 100.0);
  expect_refused(
      run_cli({"perplexity", "-m", model, "-f", text, "-c", "17", "-t", "1", "--baseline", base},
              kLimit),
      "this baseline does not fit this run: it was made with -c 16, this run uses -c 17");
  expect_refused(run_cli({"perplexity", "-m", model, "-f", text, "-c", "16", "-t", "1", "--chunks",
                          "2", "--baseline", base},
                         kLimit),
                 "it scored 21 tokens of another text (or other --chunks); this run scores 14");
}

TEST(CliFileInputs, RunWithAContextNoMachineHoldsIsRefusedBeforeAllocating) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const auto r = run_cli(
      {"run", "-m", model, "-c", "1073741824", "-p", "hi", "-n", "1", "--backend", "cpu"}, kLimit);
  expect_refused(r, "of 1,073,741,824 tokens (the context length) needs");
  EXPECT_THAT(r.err, HasSubstr("tokens fit"));
}

}  // namespace
}  // namespace kvscope::test
