// kvscope-cli inspect on hostile model files (bad-inputs.md, "Amplification and depth"):
// deeply nested JSON and packed GGUF metadata end in one clear line and a normal exit
// status, never a signal (a nested safetensors dtype used to end in SIGSEGV).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/cli_runner.h"
#include "support/test_data.h"

namespace kvscope::test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// One short error line (besides "note:" lines) and an exit status, not a signal.
void expect_one_line_error(const CliResult& r, const std::string& mentions) {
  EXPECT_GT(r.exit_code, 0) << r.err;
  EXPECT_LT(r.exit_code, 128) << r.err;
  int error_lines = 0;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("note:", 0) == 0) continue;
    ++error_lines;
    EXPECT_LT(line.size(), 600u) << line;
  }
  EXPECT_EQ(error_lines, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(mentions));
}

fs::path llama_folder() {
  const auto dir = scratch_dir();
  std::ofstream(dir / "config.json")
      << R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1,
             "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 256,
             "max_position_embeddings": 128})";
  return dir;
}

TEST(CliInspectHostile, SafetensorsDtypeNested100000DeepIsOneLine) {
  const auto dir = llama_folder();
  const std::string depth(100'000, '[');
  const std::string header = R"({"w":{"dtype":)" + depth + std::string(100'000, ']') +
                             R"(,"shape":[1],"data_offsets":[0,1]}})";
  std::ofstream out(dir / "model.safetensors", std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out << header << 'x';
  out.close();
  expect_one_line_error(run_cli({"inspect", dir.string()}), "JSON nested more than 64 levels");
}

TEST(CliInspectHostile, IndexOfOpenBracketsIsOneLine) {
  const auto dir = llama_folder();
  std::ofstream(dir / "model.safetensors.index.json") << std::string(8 << 20, '[');
  expect_one_line_error(run_cli({"inspect", dir.string()}), "JSON nested more than 64 levels");
}

TEST(CliInspectHostile, GgufOfLargeUint8ArraysIsOneLine) {
  const auto path = scratch_dir() / "arrays.gguf";
  std::ofstream out(path, std::ios::binary);
  auto put64 = [&](std::uint64_t v) { out.write(reinterpret_cast<const char*>(&v), 8); };
  auto put32 = [&](std::uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
  out.write("GGUF", 4);
  put32(3);
  put64(0);
  put64(4);
  const std::string elements(4 << 20, '\x01');
  for (int i = 0; i < 4; ++i) {
    const std::string key = "hostile.array." + std::to_string(i);
    put64(key.size());
    out << key;
    put32(9);  // array
    put32(0);  // of uint8
    put64(elements.size());
    out << elements;
  }
  out.close();
  expect_one_line_error(run_cli({"inspect", path.string()}), "general.architecture: missing");
}

}  // namespace
}  // namespace kvscope::test
