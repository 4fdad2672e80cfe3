// kvscope-cli perplexity reports llama-perplexity's number: the CLI's PPL equals a
// straightforward computation of llama-perplexity's method written out here, on the real
// stories260K model and a text of a few chunks.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/cli_runner.h"
#include "run/engine.h"
#include "support/test_data.h"

namespace kvscope::test {
namespace {

using ::testing::HasSubstr;

// 56 tokens with BOS: 3 chunks of 16 and a tail of 8, or 3 chunks of 17 and a tail of 5.
constexpr const char* kText =
    "Once upon a time, there was a little girl named Lily. She loved to go for a walk in the "
    "park and play with her mommy. One day, Lily went for a walk with a big dog.";

std::string write_text(const std::string& text) {
  const auto path = scratch_dir() / "text.txt";
  std::ofstream(path) << text;
  return path.string();
}

// llama-perplexity's method, step by step: tokenize with BOS, cut every n_ctx tokens,
// put BOS in each chunk's first place, evaluate the chunk from an empty cache, score the
// tokens at n_ctx/2 + 1 .. n_ctx - 1 from the logits one position before.
struct Expected {
  double ppl = 0;
  std::int64_t scored = 0;
};
Expected llama_perplexity_by_hand(const std::string& model, const std::string& text,
                                  std::int64_t n_ctx) {
  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  o.n_threads = 1;
  o.context_length = n_ctx;
  Engine engine(model, o);
  const std::vector<TokenId> tokens = engine.tokenize(text, true);
  const TokenId bos = engine.tokenizer().bos();
  EXPECT_EQ(tokens.front(), bos);  // stories260K adds BOS
  EXPECT_EQ(tokens.size(), 56u);
  const auto vocab = static_cast<std::size_t>(engine.spec().vocab_size);
  double nll = 0;
  Expected e;
  for (std::size_t start = 0; start + static_cast<std::size_t>(n_ctx) <= tokens.size();
       start += static_cast<std::size_t>(n_ctx)) {
    std::vector<TokenId> chunk(tokens.begin() + static_cast<std::ptrdiff_t>(start),
                               tokens.begin() + static_cast<std::ptrdiff_t>(start) + n_ctx);
    chunk[0] = bos;
    const std::vector<float> logits = engine.evaluate(chunk);
    for (auto i = static_cast<std::size_t>(n_ctx / 2); i + 1 < chunk.size(); ++i) {
      const float* row = logits.data() + i * vocab;
      double max = row[0];
      for (std::size_t v = 0; v < vocab; ++v) max = std::max<double>(max, row[v]);
      double sum = 0;
      for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - max);
      nll -= row[static_cast<std::size_t>(chunk[i + 1])] - max - std::log(sum);
      ++e.scored;
    }
  }
  e.ppl = std::exp(nll / static_cast<double>(e.scored));
  return e;
}

TEST(CliPerplexity, EqualsLlamaPerplexitysMethodComputedByHand) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const std::string text = write_text(kText);
  for (const std::int64_t n_ctx : {16, 17}) {
    const Expected e = llama_perplexity_by_hand(model, kText, n_ctx);
    const auto r = run_cli({"perplexity", "-m", model, "-f", text, "-c", std::to_string(n_ctx),
                            "--backend", "cpu", "-t", "1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // 16: 3 chunks of 7 scored tokens; 17: 3 chunks of 8.
    EXPECT_EQ(e.scored, n_ctx == 16 ? 21 : 24);
    EXPECT_EQ(number_after(r.out, "tokens scored"), static_cast<double>(e.scored)) << r.out;
    EXPECT_NEAR(number_after(r.out, "PPL"), e.ppl, 1e-6 * e.ppl + 1e-6) << "-c " << n_ctx;
  }
}

TEST(CliPerplexity, HelpSaysItFollowsLlamaPerplexity) {
  const auto r = run_cli({"perplexity", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("exactly as llama.cpp's llama-perplexity"));
  EXPECT_THAT(r.out, HasSubstr("replaced by BOS"));
}

TEST(CliPerplexity, ATextShorterThanTwoContextsIsOneClearLine) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const auto r = run_cli({"perplexity", "-m", model, "-f", write_text(kText), "-c", "64"});
  EXPECT_GT(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128);
  EXPECT_THAT(r.err, HasSubstr("a context of 64 needs at least 128"));
}

}  // namespace
}  // namespace kvscope::test
