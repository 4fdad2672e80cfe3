// The perplexity baseline file (run/perplexity_baseline.h): what is written is read back, and
// a file that is not a baseline, or one made for another model, -c or text, is refused before
// any comparison (issue #38, item 6: a GGUF given as --baseline printed "mean KL = -nan").
#include "run/perplexity_baseline.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;

PerplexityBaselineHeader header_for(std::int64_t n_ctx = 8) {
  ModelSpec spec;
  spec.architecture = "llama";
  spec.n_layers = 5;
  spec.dim = 64;
  spec.n_heads = 8;
  spec.n_kv_heads = 4;
  spec.vocab_size = 3;
  PerplexityBaselineHeader h;
  h.model = perplexity_model_identity(spec);
  h.n_vocab = 3;
  h.n_ctx = n_ctx;
  h.n_scored = 2;
  h.tokens = perplexity_tokens_hash({{1, 2, 3}, {1, 5, 6}});
  return h;
}

std::string write_baseline(const PerplexityBaselineHeader& h) {
  const auto path = (test::scratch_dir() / "base.bin").string();
  PerplexityBaselineWriter w(path, h);
  w.write_row(std::vector<float>{-0.5f, -1.0f, -2.0f});
  w.write_row(std::vector<float>{-3.0f, -0.1f, -4.0f});
  w.finish();
  return path;
}

std::string error_reading(const std::string& path, const PerplexityBaselineHeader& h) {
  try {
    PerplexityBaselineReader r(path, h);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << path << " was accepted";
  return "";
}

TEST(PerplexityBaseline, RowsWrittenAreReadBack) {
  const auto h = header_for();
  EXPECT_EQ(h.model, "llama, 5 layers, dim 64, 8 heads / 4 KV heads, vocab 3");
  PerplexityBaselineReader r(write_baseline(h), h);
  std::vector<float> row(3);
  r.read_row(row);
  EXPECT_EQ(row, (std::vector<float>{-0.5f, -1.0f, -2.0f}));
  r.read_row(row);
  EXPECT_EQ(row, (std::vector<float>{-3.0f, -0.1f, -4.0f}));
  EXPECT_THROW(r.read_row(row), UsageError);
}

TEST(PerplexityBaseline, FileThatIsNotABaselineIsRefused) {
  const auto path = (test::scratch_dir() / "model.gguf").string();
  std::ofstream(path, std::ios::binary) << "GGUF" << std::string(200, '\0');
  EXPECT_THAT(error_reading(path, header_for()),
              HasSubstr("model.gguf: not a perplexity baseline (no KVSPPLB1 header)"));
  EXPECT_THAT(error_reading("/dev/zero", header_for()), HasSubstr("a character device"));
}

TEST(PerplexityBaseline, BaselineOfAnotherModelContextOrTextIsRefused) {
  const auto h = header_for();
  const auto path = write_baseline(h);
  auto other = h;
  other.model = "qwen2, 5 layers, dim 64, 8 heads / 4 KV heads, vocab 3";
  EXPECT_THAT(error_reading(path, other),
              HasSubstr("does not fit this run: it was made with another model (llama, 5 layers"));
  EXPECT_THAT(error_reading(path, header_for(16)),
              HasSubstr("made with -c 8, this run uses -c 16"));
  other = h;
  other.tokens = perplexity_tokens_hash({{1, 2, 3}, {1, 5, 7}});
  EXPECT_THAT(error_reading(path, other), HasSubstr("scored 2 tokens of another text"));
  other = h;
  other.n_vocab = 4;
  EXPECT_THAT(error_reading(path, other), HasSubstr("3 log-probabilities per token, this model 4"));
}

TEST(PerplexityBaseline, BaselineCutShortIsRefused) {
  const auto path = write_baseline(header_for());
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 4);
  EXPECT_THAT(error_reading(path, header_for()),
              HasSubstr("the baseline is 124 bytes, its header says 128"));
}

TEST(PerplexityBaseline, WriterNamesThePathAndTheOsReason) {
  try {
    PerplexityBaselineWriter w("/nonexistent-dir/b.bin", header_for());
    FAIL() << "a baseline was opened in a folder that does not exist";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent-dir/b.bin: cannot write the baseline (No such "
                                    "file or directory)"));
  }
}

TEST(PerplexityBaseline, WriterRefusesToFinishShort) {
  const auto path = (test::scratch_dir() / "short.bin").string();
  PerplexityBaselineWriter w(path, header_for());
  w.write_row(std::vector<float>{-0.5f, -1.0f, -2.0f});
  EXPECT_THROW(w.finish(), UsageError);
}

}  // namespace
}  // namespace kvscope
