// The chunks perplexity evaluates are llama-perplexity's: the tokenized text (BOS first) cut
// every n_ctx tokens, each chunk's first token replaced by BOS, and only the second half
// scored. Expected chunks are written out by hand.
#include "run/perplexity.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "util/error.h"

namespace kvscope {
namespace {

constexpr TokenId kBos = 1;

std::string error_of(std::span<const TokenId> tokens, std::int64_t n_ctx, std::int64_t max) {
  try {
    perplexity_chunks(tokens, n_ctx, kBos, max);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PerplexityChunks, StrideIsTheContextAndEachChunkStartsWithBos) {
  // BOS then text tokens 10..20: 12 tokens, n_ctx 4 -> 3 chunks of 4, none left over.
  const std::vector<TokenId> tokens = {kBos, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  const auto chunks = perplexity_chunks(tokens, 4, kBos, 100);
  EXPECT_EQ(chunks, (std::vector<std::vector<TokenId>>{
                        {kBos, 10, 11, 12}, {kBos, 14, 15, 16}, {kBos, 18, 19, 20}}));
  // Tokens 13 and 17 sat in a chunk's first place: overwritten, never seen.
}

TEST(PerplexityChunks, TheTailThatFillsNoChunkIsDroppedAndMaxChunksCaps) {
  const std::vector<TokenId> tokens = {kBos, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  EXPECT_EQ(perplexity_chunks(tokens, 5, kBos, 100),
            (std::vector<std::vector<TokenId>>{{kBos, 10, 11, 12, 13}, {kBos, 15, 16, 17, 18}}));
  EXPECT_EQ(perplexity_chunks(tokens, 5, kBos, 1),
            (std::vector<std::vector<TokenId>>{{kBos, 10, 11, 12, 13}}));
}

TEST(PerplexityChunks, WithoutBosTheChunksAreTheTextAsIs) {
  const std::vector<TokenId> tokens = {10, 11, 12, 13, 14, 15, 16};
  EXPECT_EQ(perplexity_chunks(tokens, 3, -1, 100),
            (std::vector<std::vector<TokenId>>{{10, 11, 12}, {13, 14, 15}}));
}

TEST(PerplexityChunks, TheSecondHalfIsScored) {
  // n_ctx 4: logits at 2 predict token 3 (one token per chunk); n_ctx 5: 2 and 3 predict 3
  // and 4; n_ctx 512: 256 .. 510 predict 257 .. 511 (255 tokens).
  EXPECT_EQ(perplexity_first_scored(4), 2);
  EXPECT_EQ(perplexity_first_scored(5), 2);
  EXPECT_EQ(perplexity_first_scored(512), 256);
}

TEST(PerplexityChunks, TooShortATextOrContextIsAClearError) {
  const std::vector<TokenId> tokens = {kBos, 10, 11, 12, 13, 14, 15};
  EXPECT_NE(error_of(tokens, 4, 100).find("the text has 7 tokens; a context of 4 needs at least 8"),
            std::string::npos)
      << error_of(tokens, 4, 100);
  EXPECT_NE(error_of(tokens, 1, 100).find("perplexity needs at least 2"), std::string::npos);
  EXPECT_NE(error_of(tokens, 3, 0).find("at least 1"), std::string::npos);
  EXPECT_EQ(error_of(tokens, 3, 100), "(no error)");
}

}  // namespace
}  // namespace kvscope
