// The CPU decoder against llama.cpp on a real chat model, SmolLM2-135M-Instruct (Q4_1
// weights, Q8_0 tied embedding, byte-level BPE, no BOS), with llama.cpp's 64 greedy tokens
// fed back (teacher forcing), so one near tie cannot send the rest of a case elsewhere.
//
// How close is close: this model's hidden states carry outliers that make its logits move
// with every rounding. llama.cpp itself, built here (AVX-512) and run on the reference's
// prompts, differs from the reference (made on an AVX machine) by a median of 0.05-0.07
// nats over the top-5 log-probabilities, 0.20-0.33 at the 95th percentile, 0.64 at worst,
// and picks another greedy token at steps whose margin is up to 0.38 nats. The CPU backend
// (8-bit activations, as llama.cpp) measured 0.06-0.08 / 0.22-0.36 / 0.85 and 0.36. The
// bounds below sit just above llama.cpp's own spread; a real fault (a wrong RoPE base, a
// lost minimum, a mis-decoded block) moves every step by whole nats.
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

constexpr double kMedianTolerance = 0.1;  // nats, over every top-5 log-probability of a case
constexpr double kP95Tolerance = 0.4;
constexpr double kMaxTolerance = 1.0;
constexpr double kMarginForIds =
    0.5;  // greedy ids must agree where llama.cpp's top-2 margin exceeds this

using Step = test::ReferenceStep;
using Case = test::ReferenceCase;

// |ours - llama.cpp's| for each of llama.cpp's top 5 at one step, appended to `diffs`; our
// greedy pick there must be llama.cpp's when its margin is wide.
void compare_step(const Step& ref, std::span<const float> logprobs, std::vector<double>& diffs,
                  const std::string& what) {
  for (const auto& [id, lp] : ref.top) diffs.push_back(std::abs(logprobs[id] - lp));
  if (ref.margin() > kMarginForIds) {
    const auto best = std::max_element(logprobs.begin(), logprobs.end()) - logprobs.begin();
    EXPECT_EQ(best, ref.id) << what << " (llama.cpp's margin " << ref.margin() << ")";
  }
}

void expect_within_spread(std::vector<double> diffs, const std::string& what) {
  ASSERT_FALSE(diffs.empty());
  std::sort(diffs.begin(), diffs.end());
  const double median = diffs[diffs.size() / 2];
  const double p95 = diffs[diffs.size() * 95 / 100];
  EXPECT_LE(median, kMedianTolerance) << what;
  EXPECT_LE(p95, kP95Tolerance) << what;
  EXPECT_LE(diffs.back(), kMaxTolerance) << what;
  ::testing::Test::RecordProperty(
      what + " median/p95/max",
      std::to_string(median) + " / " + std::to_string(p95) + " / " + std::to_string(diffs.back()));
}

TEST(SmolLM2Reference, PromptsTokenizeWithoutBosAsTheFileSays) {
  KVSCOPE_REQUIRE_SHARED(model, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/smollm2-greedy.json");
  Engine engine(model, test::reference_cpu_options(512));
  for (const Case& c : test::load_reference_cases(reference)) {
    EXPECT_EQ(engine.tokenize(c.prompt, true), c.prompt_ids) << c.prompt;
  }
}

// llama.cpp's 64 greedy tokens fed back as one prompt (the batched path): every step's
// log-probabilities against llama.cpp's at that step.
TEST(SmolLM2Reference, TeacherForcedLogprobsAgreeWithLlamaCppAtEveryStep) {
  KVSCOPE_REQUIRE_SHARED(model, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/smollm2-greedy.json");
  Engine engine(model, test::reference_cpu_options(512));
  const auto vocab = static_cast<std::size_t>(engine.spec().vocab_size);
  for (const Case& c : test::load_reference_cases(reference)) {
    std::vector<TokenId> tokens = c.prompt_ids;
    for (std::size_t s = 0; s + 1 < c.steps.size(); ++s) tokens.push_back(c.steps[s].id);
    std::vector<float> logits = engine.evaluate(tokens);
    std::vector<double> diffs;
    for (std::size_t s = 0; s < c.steps.size(); ++s) {
      std::span<float> row(&logits[(c.prompt_ids.size() - 1 + s) * vocab], vocab);
      log_softmax(row, row);
      compare_step(c.steps[s], row, diffs, "\"" + c.prompt + "\" step " + std::to_string(s));
    }
    expect_within_spread(diffs, "\"" + c.prompt + "\"");
  }
}

// Free-running greedy decode (one token per step, the decode path): llama.cpp's ids up to the
// first step whose margin is too narrow to decide, each log-probability within the worst
// case of the spread (too few steps may come before a near tie for a median to mean much).
TEST(SmolLM2Reference, GreedyDecodeFollowsLlamaCppUntilANearTie) {
  KVSCOPE_REQUIRE_SHARED(model, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/smollm2-greedy.json");
  Engine engine(model, test::reference_cpu_options(512));
  for (const Case& c : test::load_reference_cases(reference)) {
    GenerationRequest r;
    r.prompt = c.prompt_ids;
    r.max_tokens = static_cast<std::int64_t>(c.steps.size());
    r.sampling.temperature = 0;
    r.top_logprobs = 5;
    std::vector<TokenEvent> events;
    engine.generate(r, [&](const TokenEvent& ev) {
      if (ev.token >= 0) events.push_back(ev);
    });
    for (std::size_t s = 0; s < c.steps.size() && s < events.size(); ++s) {
      const Step& ref = c.steps[s];
      for (std::size_t k = 0; k < ref.top.size() && k < events[s].top.size(); ++k) {
        if (events[s].top[k].first == ref.top[k].first) {
          EXPECT_NEAR(events[s].top[k].second, ref.top[k].second, kMaxTolerance)
              << "\"" << c.prompt << "\" step " << s << " token " << ref.top[k].first;
        }
      }
      if (ref.margin() <= kMarginForIds) break;  // a near tie: the paths may part here
      ASSERT_EQ(events[s].token, ref.id) << "\"" << c.prompt << "\" step " << s;
    }
  }
}

}  // namespace
}  // namespace kvscope
