// The CPU decoder against llama.cpp on the real stories260K model: for every reference
// prompt, greedy decoding must give exactly llama.cpp's 64 ids, and every top-5
// log-probability must agree to 1e-3 — whatever the block size, the prefill chunking, or a
// fork half-way (prefix sharing must not change a logit).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/run/reference_cases.h"
#include "run/engine.h"
#include "support/test_data.h"

namespace kvscope {
namespace {

constexpr double kLogprobTolerance = 1e-3;

using Case = test::ReferenceCase;

struct Generated {
  std::vector<TokenId> ids;
  std::vector<TokenEvent> events;
};

GenerationRequest greedy(const std::vector<TokenId>& prompt) {
  GenerationRequest r;
  r.prompt = prompt;
  r.max_tokens = 64;
  r.sampling.temperature = 0;
  r.top_logprobs = 5;
  return r;
}

// Checks ids and top-5 log-probabilities of a run against the reference case.
void expect_matches(const Case& c, const Generated& run, const std::string& what) {
  ASSERT_EQ(run.ids, c.greedy_ids) << what << ": greedy ids differ for \"" << c.prompt << "\"";
  ASSERT_EQ(run.events.size(), c.steps.size()) << what;
  double worst = 0;
  for (std::size_t s = 0; s < c.steps.size(); ++s) {
    const auto& got = run.events[s].top;
    ASSERT_EQ(got.size(), c.steps[s].top.size()) << what << " step " << s;
    for (std::size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(got[k].first, c.steps[s].top[k].first) << what << " step " << s << " rank " << k;
      worst = std::max(worst, std::abs(got[k].second - c.steps[s].top[k].second));
      EXPECT_NEAR(got[k].second, c.steps[s].top[k].second, kLogprobTolerance)
          << what << " step " << s << " rank " << k << " token " << got[k].first;
    }
  }
  ::testing::Test::RecordProperty(what + " worst logprob diff", std::to_string(worst));
}

Generated generate(Engine& engine, const Case& c) {
  Generated run;
  const RequestResult r = engine.generate(greedy(c.prompt_ids), [&](const TokenEvent& ev) {
    if (ev.token >= 0) run.events.push_back(ev);
  });
  run.ids = r.generated;
  return run;
}

class ReferenceTest : public ::testing::TestWithParam<int> {};

TEST_P(ReferenceTest, GreedyIdsAndTopLogprobsMatchLlamaCpp) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/stories260K-greedy.json");
  EngineOptions options;
  options.backend = BackendChoice::Cpu;
  options.q8_activations = false;  // the exact reference path: llama.cpp's attention order
  options.n_threads = 2;
  options.block_size = GetParam();
  Engine engine(model, options);
  for (const Case& c : test::load_reference_cases(reference)) {
    ASSERT_EQ(engine.tokenize(c.prompt, true), c.prompt_ids) << c.prompt;
    expect_matches(c, generate(engine, c), "block size " + std::to_string(GetParam()));
  }
}

INSTANTIATE_TEST_SUITE_P(BlockSizes, ReferenceTest, ::testing::Values(1, 16, 64));

TEST(Reference, ChunkedPrefillGivesTheSameOutput) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/stories260K-greedy.json");
  EngineOptions options;
  options.backend = BackendChoice::Cpu;
  options.q8_activations = false;          // the exact reference path: llama.cpp's attention order
  options.scheduler.max_batch_tokens = 2;  // prompts of 5+ tokens go in chunks of 2
  Engine engine(model, options);
  for (const Case& c : test::load_reference_cases(reference))
    expect_matches(c, generate(engine, c), "chunked");
}

TEST(Reference, ForkHalfWayContinuesIdenticallyToTheParent) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/stories260K-greedy.json");
  EngineOptions options;
  options.backend = BackendChoice::Cpu;
  options.q8_activations = false;  // the exact reference path: llama.cpp's attention order
  options.block_size = 16;
  Engine engine(model, options);
  for (const Case& c : test::load_reference_cases(reference)) {
    Generated parent, child;
    RequestId parent_id = 0;
    bool forked = false;
    RequestCallbacks pcb;
    pcb.on_token = [&](const TokenEvent& ev) {
      if (ev.token >= 0) parent.events.push_back(ev), parent.ids.push_back(ev.token);
    };
    parent_id = engine.submit(greedy(c.prompt_ids), pcb);
    RequestCallbacks ccb;
    ccb.on_token = [&](const TokenEvent& ev) {
      if (ev.token >= 0) child.events.push_back(ev), child.ids.push_back(ev.token);
    };
    while (engine.step()) {
      // 29 tokens generated: the shared tail block (prompt + 29 = 34 tokens) is partial
      if (!forked && parent.ids.size() == 29) {
        engine.fork(parent_id, ccb);
        child.ids = parent.ids;
        child.events = parent.events;
        forked = true;
      }
    }
    ASSERT_TRUE(forked);
    expect_matches(c, parent, "parent");
    expect_matches(c, child, "forked child");
  }
}

}  // namespace
}  // namespace kvscope
