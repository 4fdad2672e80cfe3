// Weight types from the wild: Q8_0, Q4_0, Q4_K and F16 copies of SmolLM2 made with the
// engine's own quantizers (model/gguf_requantize.h) load and decode, and their log-
// probabilities over a text stay near the original Q4_1 file's, each as near as its type can
// be. The copies re-encode Q4_1's already rounded weights, so F16 is the same model and Q8_0
// nearly so, while Q4_0 (a symmetric 4-bit grid over Q4_1's asymmetric one) and the Q4_K copy
// (Q5_0 where SmolLM2's 576-wide rows are not whole super-blocks) add rounding of their own.
// Measured on a 32-token text (median |delta log p| / same top-1): F16 0.022 / 97%, Q8_0
// 0.045 / 100%, Q4_K 0.149 / 88%, Q4_0 0.375 / 59%; the bounds leave room above those.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/cpu_ops.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_requantize.h"
#include "run/engine.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

constexpr const char* kText =
    "The capital of France is Paris. It is known for the Eiffel Tower, the Louvre and its "
    "cafes, and millions of people visit it every year.";

struct Agreement {
  double median = 0;      // |log p(next token)| difference, nats
  double top1_share = 0;  // steps whose most likely token is the same
};

// Log-probabilities [n_tokens][vocab] of every next token of `tokens`.
std::vector<float> logprobs(const std::string& model, const std::vector<TokenId>& tokens) {
  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  o.n_threads = 2;
  o.context_length = 256;
  Engine engine(model, o);
  std::vector<float> out = engine.evaluate(tokens);
  const auto vocab = static_cast<std::size_t>(engine.spec().vocab_size);
  for (std::size_t r = 0; r < tokens.size(); ++r) {
    std::span<float> row(&out[r * vocab], vocab);
    log_softmax(row, row);
  }
  return out;
}

Agreement agreement(const std::vector<float>& a, const std::vector<float>& b,
                    const std::vector<TokenId>& tokens, std::size_t vocab) {
  std::vector<double> diffs;
  int same = 0;
  for (std::size_t r = 0; r + 1 < tokens.size(); ++r) {
    const float* x = &a[r * vocab];
    const float* y = &b[r * vocab];
    const auto next = static_cast<std::size_t>(tokens[r + 1]);
    diffs.push_back(std::abs(x[next] - y[next]));
    same += std::max_element(x, x + vocab) - x == std::max_element(y, y + vocab) - y;
  }
  std::sort(diffs.begin(), diffs.end());
  return {diffs[diffs.size() / 2], static_cast<double>(same) / static_cast<double>(diffs.size())};
}

struct TypeCase {
  TensorType type;
  double max_median;  // nats
  double min_top1_share;
};

class WeightTypesTest : public ::testing::TestWithParam<TypeCase> {};

TEST_P(WeightTypesTest, ACopyInThisTypeDecodesNearTheOriginal) {
  KVSCOPE_REQUIRE_SHARED(original, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  const TypeCase& c = GetParam();
  const std::string copy =
      (test::scratch_dir() / ("smollm2-" + std::string(tensor_type_name(c.type)) + ".gguf"))
          .string();
  const RequantizeReport report = requantize_gguf(original, copy, c.type);
  EXPECT_EQ(report.matrices + report.fallbacks, 211);  // 30 x 7 projections + the embedding
  EXPECT_EQ(GgufFile(copy).tensor("blk.0.ffn_down.weight").type, c.type);  // 1536-wide rows

  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  const std::vector<TokenId> tokens = Engine(original, o).tokenize(kText, true);
  const std::vector<float> want = logprobs(original, tokens);
  const std::vector<float> got = logprobs(copy, tokens);
  const Agreement a = agreement(want, got, tokens, want.size() / tokens.size());
  RecordProperty("median_nats", std::to_string(a.median));
  RecordProperty("top1_share", std::to_string(a.top1_share));
  EXPECT_LE(a.median, c.max_median) << tensor_type_name(c.type);
  EXPECT_GE(a.top1_share, c.min_top1_share) << tensor_type_name(c.type);
}

INSTANTIATE_TEST_SUITE_P(Copies, WeightTypesTest,
                         ::testing::Values(TypeCase{TensorType::F16, 0.1, 0.9},
                                           TypeCase{TensorType::Q8_0, 0.1, 0.9},
                                           TypeCase{TensorType::Q4_K, 0.3, 0.75},
                                           TypeCase{TensorType::Q4_0, 0.6, 0.45}),
                         [](const auto& p) { return std::string(tensor_type_name(p.param.type)); });

TEST(Requantize, RowsThatAreNotWholeSuperBlocksFallBackAsLlamaCppDoes) {
  EXPECT_EQ(requantize_type(TensorType::Q4_K, 576), TensorType::Q5_0);
  EXPECT_EQ(requantize_type(TensorType::Q4_K, 1536), TensorType::Q4_K);
  EXPECT_EQ(requantize_type(TensorType::Q6_K, 576), TensorType::Q8_0);
  EXPECT_EQ(requantize_type(TensorType::Q4_0, 40), TensorType::F16);
  EXPECT_EQ(requantize_type(TensorType::F16, 7), TensorType::F16);
}

TEST(Requantize, ATypeTheEngineCannotWriteIsRefused) {
  KVSCOPE_REQUIRE_SHARED(original, "models/stories260K.gguf");
  EXPECT_THROW(
      requantize_gguf(original, (test::scratch_dir() / "x.gguf").string(), TensorType::Q2_K),
      UsageError);
}

}  // namespace
}  // namespace kvscope
