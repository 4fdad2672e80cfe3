// How a request ends and what it streams: text up to (not including) a stop string; text
// that might be the start of a stop string held back, and released once it is not (or when
// the request ends); EOS ends the request (or not, when asked); max_tokens. The final text
// always equals the concatenation of the streamed pieces.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/synthetic_model.h"
#include "support/engine_fixture.h"
#include "support/generation_fixtures.h"

namespace kvscope {
namespace {

constexpr std::int64_t kTokens = 60;

// decoded[k]: the text of the first k generated ids (stories260K's text here is ASCII).
std::vector<std::string> decoded_prefixes(const Engine& engine, const std::vector<TokenId>& ids) {
  std::vector<std::string> out{""};
  for (const TokenId id : ids) out.push_back(out.back() + engine.tokenizer().token_bytes(id));
  return out;
}

Recorded run_with_stops(Engine& engine, std::vector<std::string> stops,
                        std::int64_t max_tokens = kTokens) {
  GenerationRequest r = greedy_request(engine, story_prompts()[0], max_tokens);
  r.stop_strings = std::move(stops);
  Recorded rec;
  engine.submit(r, record_into(rec));
  run_bounded(engine);
  EXPECT_EQ(rec.n_finished, 1);
  EXPECT_EQ(rec.streamed, rec.result.text);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
  return rec;
}

// The longest suffix of `text` that is a proper prefix of `stop`.
std::size_t could_start_stop(const std::string& text, const std::string& stop) {
  for (std::size_t n = std::min(stop.size() - 1, text.size()); n > 0; --n) {
    if (text.compare(text.size() - n, n, stop, 0, n) == 0) return n;
  }
  return 0;
}

class SchedulerStop : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto found = test::find_shared("models/stories260K.gguf");
    if (!found) GTEST_SKIP() << "needs models/stories260K.gguf in " << test::shared_dir();
    model_ = found->string();
    engine_ = std::make_unique<Engine>(model_, small_options());
    solo_ = solo_run(model_, story_prompts()[0], kTokens);
    decoded_ = decoded_prefixes(*engine_, solo_.generated);
    ASSERT_EQ(decoded_.back(), solo_.text);
  }
  // The first k at which the text of k tokens contains `stop`.
  std::size_t tokens_until(const std::string& stop) const {
    for (std::size_t k = 0; k < decoded_.size(); ++k) {
      if (decoded_[k].find(stop) != std::string::npos) return k;
    }
    return 0;
  }

  std::string model_;
  std::unique_ptr<Engine> engine_;
  RequestResult solo_;
  std::vector<std::string> decoded_;
};

TEST_F(SchedulerStop, TextEndsRightBeforeTheStopString) {
  const std::string stop = "Lily.";
  const std::size_t at = solo_.text.find(stop);
  ASSERT_NE(at, std::string::npos) << solo_.text;
  const Recorded rec = run_with_stops(*engine_, {stop});
  EXPECT_EQ(rec.result.reason, FinishReason::StopString);
  EXPECT_EQ(rec.result.text, solo_.text.substr(0, at));
  // The ids run up to the token that completed the stop string.
  const std::size_t k = tokens_until(stop);
  EXPECT_EQ(rec.result.generated,
            std::vector<TokenId>(solo_.generated.begin(), solo_.generated.begin() + k));
  for (const TokenEvent& ev : rec.events) EXPECT_EQ(ev.text.find(stop), std::string::npos);
}

TEST_F(SchedulerStop, TheEarliestOfSeveralStopStringsWins) {
  const std::size_t girl = solo_.text.find("little girl");
  ASSERT_NE(girl, std::string::npos);
  ASSERT_LT(girl, solo_.text.find("red ball"));
  const Recorded rec = run_with_stops(*engine_, {"red ball", "never there", "little girl"});
  EXPECT_EQ(rec.result.reason, FinishReason::StopString);
  EXPECT_EQ(rec.result.text, solo_.text.substr(0, girl));
}

TEST_F(SchedulerStop, StopStringAtTheVeryStartLeavesNoText) {
  ASSERT_EQ(solo_.text.substr(0, 1), ",");
  const Recorded rec = run_with_stops(*engine_, {","});
  EXPECT_EQ(rec.result.reason, FinishReason::StopString);
  EXPECT_EQ(rec.result.text, "");
  EXPECT_EQ(rec.result.generated.size(), 1u);
}

// Stop " park with Tom": " park" is generated (then "."), so it is held until the "." shows
// it is not the stop string, and then released; nothing is lost.
TEST_F(SchedulerStop, TextThatMightStartAStopStringIsHeldBackUntilItCannot) {
  const std::string stop = " park with Tom";
  ASSERT_NE(solo_.text.find(" park."), std::string::npos) << solo_.text;
  const Recorded rec = run_with_stops(*engine_, {stop});
  EXPECT_EQ(rec.result.reason, FinishReason::Length);
  EXPECT_EQ(rec.result.text, solo_.text);
  ASSERT_EQ(rec.events.size(), solo_.generated.size());
  std::size_t most_held = 0;
  for (std::size_t k = 0; k < rec.events.size(); ++k) {
    // After token k + 1: what was streamed is the text so far minus exactly the longest
    // end that could still become the stop string.
    const std::string& text = decoded_[k + 1];
    const std::size_t held = could_start_stop(text, stop);
    EXPECT_EQ(rec.streamed_after[k], text.substr(0, text.size() - held)) << "token " << k;
    most_held = std::max(most_held, held);
  }
  EXPECT_GE(most_held, std::string(" park").size());
}

// The same stop string with max_tokens ending while " park" is held: the held text is
// released by a last event (token -1) when the request finishes.
TEST_F(SchedulerStop, HeldTextIsReleasedWhenTheRequestEnds) {
  const std::string stop = " park with Tom";
  const std::size_t k = tokens_until(" park");
  ASSERT_GT(k, 0u);
  ASSERT_EQ(could_start_stop(decoded_[k], stop), std::string(" park").size());
  const Recorded rec = run_with_stops(*engine_, {stop}, static_cast<std::int64_t>(k));
  EXPECT_EQ(rec.result.reason, FinishReason::Length);
  EXPECT_EQ(rec.result.text, decoded_[k]);
  ASSERT_EQ(rec.events.size(), k + 1);
  EXPECT_EQ(rec.events.back().token, -1);
  EXPECT_EQ(rec.events.back().text, " park");
}

TEST_F(SchedulerStop, MaxTokensEndsTheRequestWithLength) {
  for (const std::int64_t n : {1, 2, 17}) {
    const Recorded rec = run_with_stops(*engine_, {}, n);
    EXPECT_EQ(rec.result.reason, FinishReason::Length);
    EXPECT_EQ(rec.result.generated,
              std::vector<TokenId>(solo_.generated.begin(), solo_.generated.begin() + n));
    EXPECT_EQ(rec.result.text, decoded_[static_cast<std::size_t>(n)]);
    EXPECT_EQ(rec.result.prompt_tokens, 5);
  }
}

// A tiny random model whose greedy output is known: rewritten with its k-th generated token
// declared EOS, it must stop right there (and go on through it when asked to).
TEST(SchedulerEndOfGeneration, EosEndsTheRequestUnlessAskedToGoOn) {
  const ModelSpec spec = test::tiny_llama_spec("eos-test", 300);
  const auto dir = test::scratch_dir();
  const std::string plain = (dir / "plain.gguf").string();
  write_synthetic_gguf(plain, spec, TensorType::F32, 7);
  GenerationRequest r;
  r.prompt = {1, 270, 280, 290};
  r.max_tokens = 30;
  r.sampling.temperature = 0;
  r.stop_at_end_of_generation = false;
  const RequestResult free_run = Engine(plain, small_options(128)).generate(r);
  ASSERT_EQ(free_run.generated.size(), 30u);
  // The first token (after two) that did not appear before: it becomes EOS.
  std::size_t k = 2;
  const auto& ids = free_run.generated;
  while (k < ids.size() && std::find(ids.begin(), ids.begin() + k, ids[k]) != ids.begin() + k) ++k;
  ASSERT_LT(k, ids.size()) << "the random model repeats itself; pick another seed";

  SyntheticVocab vocab = default_synthetic_vocab(spec.vocab_size);
  vocab.eos_id = ids[k];
  const std::string with_eos = (dir / "eos.gguf").string();
  write_synthetic_gguf(with_eos, spec, TensorType::F32, 7, &vocab);
  Engine engine(with_eos, small_options(128));
  ASSERT_EQ(engine.tokenizer().eos(), ids[k]);
  r.stop_at_end_of_generation = true;
  Recorded rec;
  engine.submit(r, record_into(rec));
  run_bounded(engine);
  EXPECT_EQ(rec.result.reason, FinishReason::EndOfGeneration);
  EXPECT_EQ(rec.result.generated, std::vector<TokenId>(ids.begin(), ids.begin() + k));
  EXPECT_EQ(rec.ids, rec.result.generated);  // the EOS token itself is not streamed
  EXPECT_EQ(rec.streamed, rec.result.text);

  r.stop_at_end_of_generation = false;
  EXPECT_EQ(engine.generate(r).generated, ids);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

}  // namespace
}  // namespace kvscope
