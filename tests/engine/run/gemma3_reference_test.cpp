// The CPU decoder on a real Gemma 3, the 270M base model at Q4_K_M (Q5_0, Q8_0, Q4_K and Q6_K
// matrices; MQA with head_dim 256; five sliding-window layers of 512 tokens in every six; q/k
// norms, post-norms, a GELU gate, scaled embeddings; a 262,144-piece SentencePiece vocab),
// against llama.cpp's greedy run in ../shared/reference/gemma3-270m-greedy.json, whose last
// prompt (661 tokens) passes the window. The file is fetched by packaging/get-model.sh
// gemma-3-270m (never committed); without it the tests skip.
//
// How close is close. llama.cpp run again here differs from the reference file by up to
// 0.41 / 0.54 / 0.91 / 0.48 nats over the top-5 log-probabilities of the four prompts, and the
// fp64 truth (tests/reference/fp64_forward.py) from the file by 0.41 / 0.59 / 0.96 / 0.55: the
// reference is itself one rounding of the model. The truth even picks another greedy token
// than the file where the file's margin is 0.36. Measured here (default path): median 0.06-0.11,
// p95 0.31-0.57, max 0.49-1.12 (the 1.12 is a 5th-ranked token at log p -9.8), and greedy
// misses only where the file's margin is at most 0.36. Against the truth the default path's
// mean KL is 1.1e-3 / 1.7e-3 / 4.8e-4 / 1.3e-3, llama.cpp's 2.8e-3 / 5.2e-3 / 1.6e-3 / 2.4e-3
// (its CPU GELU rounds to fp16). A real fault (a wrong window, rope base or scale, a missing
// norm) moves every step by whole nats.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/cpu_ops.h"
#include "engine/run/reference_cases.h"
#include "run/engine.h"
#include "support/test_data.h"

namespace kvscope {
namespace {

constexpr const char* kModel = "gemma-3-270m-q4_k_m.gguf";
constexpr double kMedianTolerance = 0.15;  // nats, over every top-5 log-probability of a case
constexpr double kP95Tolerance = 0.7;
constexpr double kMaxTolerance = 1.3;
constexpr double kMarginForIds = 0.4;  // greedy ids agree where the file's margin exceeds this

using Case = test::ReferenceCase;

std::vector<Case> cases() {
  const auto reference = test::find_shared("reference/gemma3-270m-greedy.json");
  return reference ? test::load_reference_cases(reference->string()) : std::vector<Case>{};
}

// The cases the logit comparisons run: all four, or in the sanitizer build (far slower per
// token, and 262,144 logits a position) the first; the window test runs the long one anyway.
std::vector<Case> compared_cases() {
  std::vector<Case> all = cases();
#if defined(__SANITIZE_ADDRESS__)
  all.resize(std::min<std::size_t>(all.size(), 1));
#endif
  return all;
}

TEST(Gemma3Reference, PromptsTokenizeAsLlamaCppWithBos) {
  KVSCOPE_REQUIRE_DOWNLOADED_MODEL(model, kModel, "gemma-3-270m");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/gemma3-270m-greedy.json");
  Engine engine(model, test::reference_cpu_options(1024));
  for (const Case& c : cases()) {
    EXPECT_EQ(engine.tokenize(c.prompt, true), c.prompt_ids) << c.prompt.substr(0, 40);
  }
}

// llama.cpp's greedy tokens fed back as one prompt: every step's top-5 log-probabilities
// within the spread above, the greedy pick llama.cpp's where its margin is wide.
TEST(Gemma3Reference, TeacherForcedLogprobsAgreeWithLlamaCppPastTheWindow) {
  KVSCOPE_REQUIRE_DOWNLOADED_MODEL(model, kModel, "gemma-3-270m");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/gemma3-270m-greedy.json");
  Engine engine(model, test::reference_cpu_options(1024));
  const auto vocab = static_cast<std::size_t>(engine.spec().vocab_size);
  for (const Case& c : compared_cases()) {
    const std::string what = "\"" + c.prompt.substr(0, 40) + "\"";
    std::vector<TokenId> tokens = c.prompt_ids;
    for (std::size_t s = 0; s + 1 < c.steps.size(); ++s) tokens.push_back(c.steps[s].id);
    std::vector<float> logits = engine.evaluate(tokens);
    std::vector<double> diffs;
    for (std::size_t s = 0; s < c.steps.size(); ++s) {
      std::span<float> row(&logits[(c.prompt_ids.size() - 1 + s) * vocab], vocab);
      log_softmax(row, row);
      for (const auto& [id, lp] : c.steps[s].top) diffs.push_back(std::abs(row[id] - lp));
      if (c.steps[s].margin() > kMarginForIds) {
        const auto best = std::max_element(row.begin(), row.end()) - row.begin();
        EXPECT_EQ(best, c.steps[s].id) << what << " step " << s;
      }
    }
    std::sort(diffs.begin(), diffs.end());
    EXPECT_LE(diffs[diffs.size() / 2], kMedianTolerance) << what;
    EXPECT_LE(diffs[diffs.size() * 95 / 100], kP95Tolerance) << what;
    EXPECT_LE(diffs.back(), kMaxTolerance) << what;
  }
}

// The decode path, one token per step: llama.cpp's ids until its first narrow margin.
TEST(Gemma3Reference, GreedyDecodeFollowsLlamaCppUntilANearTie) {
  KVSCOPE_REQUIRE_DOWNLOADED_MODEL(model, kModel, "gemma-3-270m");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/gemma3-270m-greedy.json");
  Engine engine(model, test::reference_cpu_options(1024));
  for (const Case& c : compared_cases()) {
    GenerationRequest r;
    r.prompt = c.prompt_ids;
    r.max_tokens = static_cast<std::int64_t>(c.steps.size());
    r.sampling.temperature = 0;
    std::vector<TokenId> got;
    engine.generate(r, [&](const TokenEvent& ev) {
      if (ev.token >= 0) got.push_back(ev.token);
    });
    for (std::size_t s = 0; s < c.steps.size() && s < got.size(); ++s) {
      if (c.steps[s].margin() <= kMarginForIds) break;  // a near tie: the paths may part here
      ASSERT_EQ(got[s], c.steps[s].id) << "\"" << c.prompt.substr(0, 40) << "\" step " << s;
    }
  }
}

// The sliding layers form their own KV group, whose blocks go back to the pool once no
// query sees them: the prompt's own queries read all 661 positions, but from the first
// decode step on the local group holds the window's 32 blocks (and the one it is filling),
// the global group every block of the sequence.
TEST(Gemma3Reference, TheSlidingLayersKeepOnlyTheWindowsBlocks) {
  KVSCOPE_REQUIRE_DOWNLOADED_MODEL(model, kModel, "gemma-3-270m");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/gemma3-270m-greedy.json");
  const std::vector<Case> all = cases();
  ASSERT_EQ(all.size(), 4u);
  const Case& longest = all[3];
  ASSERT_GT(longest.prompt_ids.size(), 600u);
  Engine engine(model, test::reference_cpu_options(1024));
  const KvCacheManager& kv = engine.kv_cache();
  ASSERT_EQ(kv.n_groups(), 2);
  ASSERT_EQ(kv.group_of_layer(0), 0);  // layers 0-4, 6-10, 12-16: window 512
  ASSERT_EQ(kv.group_of_layer(5), 1);  // layers 5, 11, 17: the whole context
  GenerationRequest r;
  r.prompt = longest.prompt_ids;
  r.max_tokens = 3;
  r.sampling.temperature = 0;
  std::int64_t local = -1, global = -1, n_tokens = 0;
  engine.generate(r, [&](const TokenEvent& ev) {  // the last event: after two decode steps
    if (ev.token < 0) return;
    const SeqId seq = kv.sequence_ids().back();
    n_tokens = kv.n_tokens(seq);
    local = kv.block_table(seq, 0).n_held();
    global = kv.block_table(seq, 1).n_held();
  });
  ASSERT_GT(n_tokens, 600);
  EXPECT_EQ(global, (n_tokens + 15) / 16);
  EXPECT_LE(local, 512 / 16 + 1);
  EXPECT_GE(local, 512 / 16);
}

}  // namespace
}  // namespace kvscope
