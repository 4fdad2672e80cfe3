// A model with more output rows than its tokenizer has tokens (a padded vocab: 32001 rows for
// 32000 tokens) must never stop the engine: the ids past the tokenizer's vocab are never
// sampled, and an id that still arrives (a backend's greedy pick) ends only its own request,
// with the reason; the other requests and the engine go on.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/synthetic_model.h"
#include "plan/kv_footprint.h"
#include "run/cpu_backend.h"
#include "support/engine_fixture.h"
#include "support/generation_fixtures.h"
#include "wrapped_scheduler.h"

namespace kvscope {
namespace {

constexpr std::int64_t kRows = 300;    // the model's embedding and output rows
constexpr std::int64_t kTokens = 260;  // the tokenizer's: <unk> <s> </s>, 256 bytes, "a"

// A tiny random model whose last kRows - kTokens rows no token spells.
std::string padded_model() {
  const ModelSpec spec = test::tiny_llama_spec("padded-vocab", kRows);
  const std::string path = (test::scratch_dir() / "padded.gguf").string();
  const SyntheticVocab vocab = default_synthetic_vocab(kTokens);
  write_synthetic_gguf(path, spec, TensorType::F32, 7, &vocab);
  return path;
}

GenerationRequest sampled(std::uint64_t seed, std::int64_t max_tokens) {
  GenerationRequest r;
  r.prompt = {1, 100, 200};
  r.max_tokens = max_tokens;
  r.sampling.temperature = 1.5f;  // flat enough that the padded rows would be drawn often
  r.sampling.top_k = 0;
  r.sampling.top_p = 1.0f;
  r.sampling.min_p = 0.0f;
  r.sampling.seed = seed;
  r.stop_at_end_of_generation = false;
  return r;
}

void expect_spellable_length_run(const Recorded& rec, std::int64_t max_tokens) {
  ASSERT_EQ(rec.n_finished, 1);
  EXPECT_EQ(rec.result.reason, FinishReason::Length) << rec.result.error;
  EXPECT_EQ(static_cast<std::int64_t>(rec.result.generated.size()), max_tokens);
  for (const TokenId id : rec.result.generated) EXPECT_LT(id, kTokens);
}

TEST(PaddedVocab, SampledRequestsNeverDrawAnIdTheTokenizerCannotSpell) {
  Engine engine(padded_model(), small_options(128));
  ASSERT_EQ(engine.spec().vocab_size, kRows);
  ASSERT_EQ(engine.tokenizer().vocab_size(), kTokens);
  // 40 of 300 rows at temperature 1.5: an unmasked draw lands there within a few tokens.
  Recorded a, b;
  engine.submit(sampled(1, 60), record_into(a));
  engine.submit(sampled(2, 60), record_into(b));
  EXPECT_NO_THROW(run_bounded(engine));
  expect_spellable_length_run(a, 60);
  expect_spellable_length_run(b, 60);
  EXPECT_EQ(engine.generate(sampled(3, 5)).reason, FinishReason::Length);  // still usable
}

// The CPU backend with the padded rows' logits forced: +100 (they would win every pick and
// draw) or -inf (as if they did not exist).
class PaddedRowsBackend final : public test::ForwardingBackend {
 public:
  PaddedRowsBackend(Backend& inner, float padded_logit)
      : ForwardingBackend(inner), padded_logit_(padded_logit) {}
  void forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
               std::vector<float>& logits) override {
    inner_.forward(chunks, kv, logits);
    for (std::size_t r = 0; r < logits.size() / kRows; ++r) {
      std::fill(logits.begin() + static_cast<std::ptrdiff_t>(r * kRows + kTokens),
                logits.begin() + static_cast<std::ptrdiff_t>((r + 1) * kRows), padded_logit_);
    }
  }

 private:
  float padded_logit_;
};

// Greedy, sampled and top-logprobs requests on a scheduler over PaddedRowsBackend.
std::vector<Recorded> run_on_padded(const std::string& path, float padded_logit) {
  const auto model = load_model(path);
  const auto tokenizer = make_tokenizer(*model);
  CpuBackendOptions cpu;
  cpu.n_threads = 1;
  cpu.context_length = 128;
  CpuBackend inner(*model, cpu);
  PaddedRowsBackend backend(inner, padded_logit);
  KvCacheConfig config = default_kv_config(model->spec(), KvDtype::F16, KvDtype::F16, 16);
  config.max_context = 128;
  config.n_blocks = 32;
  KvCacheManager kv(config);
  Scheduler scheduler(backend, kv, *tokenizer, SchedulerOptions{}, model->spec().vocab_size);
  GenerationRequest greedy = sampled(0, 20);
  greedy.sampling.temperature = 0;
  GenerationRequest with_logprobs = greedy;
  with_logprobs.top_logprobs = 5;
  std::vector<Recorded> recs(3);
  scheduler.submit(greedy, record_into(recs[0]));
  scheduler.submit(sampled(5, 20), record_into(recs[1]));
  scheduler.submit(with_logprobs, record_into(recs[2]));
  EXPECT_NO_THROW({
    for (int s = 0; s < 1000 && scheduler.step(); ++s) {
    }
  });
  EXPECT_TRUE(scheduler.idle());
  return recs;
}

TEST(PaddedVocab, PaddedRowsAreAsIfTheyDidNotExist) {
  const std::string path = padded_model();
  const std::vector<Recorded> boosted = run_on_padded(path, 100.0f);
  const std::vector<Recorded> absent = run_on_padded(path, -std::numeric_limits<float>::infinity());
  for (std::size_t i = 0; i < boosted.size(); ++i) {
    expect_spellable_length_run(boosted[i], 20);
    EXPECT_EQ(boosted[i].result.generated, absent[i].result.generated) << "request " << i;
  }
  for (const TokenEvent& ev : boosted[2].events) {
    for (const auto& [id, logprob] : ev.top) EXPECT_LT(id, kTokens);
  }
}

// stories260K (512 tokens) over a backend whose greedy pick for the first row of one step
// is an id past the vocab: that request ends with the reason, the other one goes on.
class OutOfVocabPickBackend final : public test::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  void forward_greedy(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                      std::vector<TokenId>& picks) override {
    Backend::forward_greedy(chunks, kv, picks);
    if (++steps == 3 && !picks.empty()) picks[0] = 519;
  }
  int steps = 0;
};

using SchedulerOutOfVocab = test::WrappedScheduler<OutOfVocabPickBackend>;

TEST_F(SchedulerOutOfVocab, AnUnspellablePickEndsOnlyItsRequest) {
  Recorded a, b;
  submit(0, 10, a);
  submit(1, 10, b);
  EXPECT_NO_THROW(run());
  ASSERT_EQ(a.n_finished, 1);
  EXPECT_EQ(a.result.reason, FinishReason::Error);
  EXPECT_NE(a.result.error.find("token id 519, which its tokenizer (512 tokens) cannot spell"),
            std::string::npos)
      << a.result.error;
  EXPECT_EQ(a.result.generated.size(), 2u);  // the tokens before it are kept
  ASSERT_EQ(b.n_finished, 1);
  EXPECT_EQ(b.result.reason, FinishReason::Length);
  EXPECT_EQ(b.result.generated, solo_run(path_, story_prompts()[1], 10).generated);
  EXPECT_EQ(kv_->usage().n_used, 0);
}

}  // namespace
}  // namespace kvscope
