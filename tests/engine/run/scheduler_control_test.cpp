// Cancellation and refused requests. cancel() (from the token callback or from another
// thread) ends a request at the start of the next step with the text so far and its blocks
// released, and the engine goes on; bad requests are refused at submit with a message that
// names the numbers, before anything runs.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/engine_fixture.h"
#include "util/error.h"

namespace kvscope {
namespace {

// The cancelled request got exactly `n` tokens: its solo output's first n, with their text.
void expect_cancelled_after(const std::string& model, const Recorded& rec, std::size_t n) {
  ASSERT_EQ(rec.n_finished, 1);
  EXPECT_EQ(rec.result.reason, FinishReason::Cancelled);
  const RequestResult& solo = solo_run(model, story_prompts()[0], static_cast<std::int64_t>(n));
  EXPECT_EQ(rec.result.generated, solo.generated);
  EXPECT_EQ(rec.result.text, solo.text);
  EXPECT_EQ(rec.streamed, rec.result.text);
}

TEST(SchedulerCancel, CancelFromTheTokenCallbackEndsTheRequestAtTheNextStep) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  Recorded a;
  RequestId id = 0;
  std::int64_t step = 0, cancel_step = -1, finish_step = -1, used_at_finish = -1;
  RequestCallbacks cb = record_into(a);
  cb.on_token = [&, record = cb.on_token](const TokenEvent& ev) {
    record(ev);
    if (a.ids.size() == 10 && cancel_step < 0) {
      engine.cancel(id);
      cancel_step = step;
    }
  };
  cb.on_finish = [&, record = cb.on_finish](const RequestResult& r) {
    record(r);
    finish_step = step;
    used_at_finish = engine.kv_cache().usage().n_used;
  };
  id = engine.submit(greedy_request(engine, story_prompts()[0], 100), cb);
  while (engine.step()) ++step;

  EXPECT_EQ(cancel_step, 9);
  EXPECT_EQ(finish_step, cancel_step + 1);
  EXPECT_EQ(used_at_finish, 0);  // released before on_finish runs
  expect_cancelled_after(model, a, 10);

  // The next request works and is unaffected.
  Recorded next;
  engine.submit(greedy_request(engine, story_prompts()[1], 30), record_into(next));
  run_bounded(engine);
  EXPECT_EQ(next.result.generated, solo_run(model, story_prompts()[1], 30).generated);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

TEST(SchedulerCancel, CancellingOneRequestLeavesTheOthersUnchanged) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  Recorded a, b, c;
  const RequestId id_a =
      engine.submit(greedy_request(engine, story_prompts()[0], 100), record_into(a));
  engine.submit(greedy_request(engine, story_prompts()[1], 40), record_into(b));
  // c is still waiting (max_running 1 would delay it; here it is cancelled before any step).
  const RequestId id_c =
      engine.submit(greedy_request(engine, story_prompts()[2], 40), record_into(c));
  engine.cancel(id_c);
  for (int s = 0; s < 7; ++s) ASSERT_TRUE(engine.step());
  engine.cancel(id_a);
  engine.cancel(id_a);  // twice, and for ids that are gone or never existed: no effect
  engine.cancel(id_c);
  engine.cancel(12345);
  run_bounded(engine);

  expect_cancelled_after(model, a, 7);
  ASSERT_EQ(c.n_finished, 1);
  EXPECT_EQ(c.result.reason, FinishReason::Cancelled);
  EXPECT_TRUE(c.result.generated.empty());
  EXPECT_EQ(c.result.text, "");
  EXPECT_EQ(b.result.reason, FinishReason::Length);
  EXPECT_EQ(b.result.generated, solo_run(model, story_prompts()[1], 40).generated);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

TEST(SchedulerCancel, CancelFromAnotherThreadDuringAStepEndsTheRequestAtTheNextStep) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  Recorded a;
  RequestId id = 0;
  std::mutex m;
  std::condition_variable cv;
  bool reached = false, cancelled = false;
  RequestCallbacks cb = record_into(a);
  // The 5th token's callback (inside step()) waits until the other thread has cancelled.
  cb.on_token = [&, record = cb.on_token](const TokenEvent& ev) {
    record(ev);
    if (a.ids.size() != 5) return;
    std::unique_lock lock(m);
    reached = true;
    cv.notify_all();
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return cancelled; }));
  };
  std::int64_t calls = 0, finish_call = -1;
  cb.on_finish = [&, record = cb.on_finish](const RequestResult& r) {
    record(r);
    finish_call = calls;
  };
  id = engine.submit(greedy_request(engine, story_prompts()[0], 100), cb);
  std::thread canceller([&] {
    std::unique_lock lock(m);
    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return reached; })) return;
    engine.cancel(id);
    cancelled = true;
    cv.notify_all();
  });
  while (calls < 1000) {
    ++calls;
    if (!engine.step()) break;
  }
  canceller.join();
  EXPECT_EQ(finish_call, 6);  // five steps of one token each, then the step that ends it
  expect_cancelled_after(model, a, 5);
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

TEST(SchedulerCancel, CancelFromAnotherThreadBetweenStepsEndsTheRequestAtTheNextStep) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  Recorded a;
  const RequestId id =
      engine.submit(greedy_request(engine, story_prompts()[0], 100), record_into(a));
  for (int s = 0; s < 3; ++s) ASSERT_TRUE(engine.step());
  std::atomic<bool> done{false};
  std::thread canceller([&] {
    engine.cancel(id);
    done.store(true, std::memory_order_release);
  });
  while (!done.load(std::memory_order_acquire)) std::this_thread::yield();
  canceller.join();
  engine.step();  // the step that ends it
  expect_cancelled_after(model, a, 3);
  EXPECT_FALSE(engine.step());
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

// Callbacks may submit new requests (a chat queues the next turn when one ends), also
// while the scheduler is walking its queues to apply cancellations.
TEST(SchedulerCancel, OnFinishMaySubmitTheNextRequest) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  std::vector<Recorded> chain(4);
  std::vector<RequestId> ids(4, 0);
  std::function<void(std::size_t)> submit = [&](std::size_t i) {
    RequestCallbacks cb = record_into(chain[i]);
    cb.on_finish = [&, i, record = cb.on_finish](const RequestResult& r) {
      record(r);
      if (i + 1 < chain.size()) submit(i + 1);
    };
    ids[i] = engine.submit(greedy_request(engine, story_prompts()[i], 12), cb);
  };
  submit(0);
  engine.cancel(ids[0]);  // cancelled while queued; its on_finish submits request 1
  run_bounded(engine);
  EXPECT_EQ(chain[0].result.reason, FinishReason::Cancelled);
  for (std::size_t i = 1; i < chain.size(); ++i) {
    ASSERT_EQ(chain[i].n_finished, 1) << i;
    EXPECT_EQ(chain[i].result.generated, solo_run(model, story_prompts()[i], 12).generated) << i;
  }
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

TEST(SchedulerErrors, EmptyPromptIsAUsageError) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  GenerationRequest r = greedy_request(engine, "x", 10);
  r.prompt.clear();
  EXPECT_THROW(engine.submit(r), UsageError);
  EXPECT_TRUE(engine.idle());
}

TEST(SchedulerErrors, MaxTokensBelowOneIsAUsageError) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  for (const std::int64_t n : {0, -1}) {
    try {
      engine.submit(greedy_request(engine, story_prompts()[0], n));
      ADD_FAILURE() << "max_tokens " << n << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("max_tokens"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(engine.idle());
}

TEST(SchedulerErrors, PromptTokenOutsideTheVocabularyIsAUsageError) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  for (const TokenId bad : {512, -3}) {
    GenerationRequest r = greedy_request(engine, story_prompts()[0], 10);
    r.prompt[2] = bad;
    try {
      engine.submit(r);
      ADD_FAILURE() << "token id " << bad << " was accepted";
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::to_string(bad)), std::string::npos) << what;
      EXPECT_NE(what.find("512"), std::string::npos) << what;  // the vocabulary size
    }
  }
  EXPECT_TRUE(engine.idle());
}

TEST(SchedulerErrors, BadSamplingSettingsAreAUsageError) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  GenerationRequest r = greedy_request(engine, story_prompts()[0], 10);
  r.sampling.top_p = 1.5f;
  EXPECT_THROW(engine.submit(r), UsageError);
  EXPECT_TRUE(engine.idle());
}

TEST(SchedulerErrors, PromptLongerThanTheContextIsACapacityErrorNamingBothNumbers) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options(16));
  GenerationRequest r =
      greedy_request(engine, "Lily and Ben went to the park. They saw a big dog.", 5);
  ASSERT_GT(r.prompt.size(), 16u);
  try {
    engine.submit(r);
    FAIL() << "a prompt of " << r.prompt.size() << " tokens was accepted by a context of 16";
  } catch (const CapacityError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(r.prompt.size())), std::string::npos) << what;
    EXPECT_NE(what.find("16"), std::string::npos) << what;
  }
  EXPECT_TRUE(engine.idle());
  EXPECT_FALSE(engine.step());
}

// The context is what the KV cache holds: a prompt that fills it still gets the one token
// sampled from its last position, and generation stops when the cache is full.
TEST(SchedulerErrors, PromptFillingTheWholeContextGeneratesOneToken) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options(12));
  const GenerationRequest r = greedy_request(engine, story_prompts()[1], 10);
  ASSERT_EQ(r.prompt.size(), 12u);
  const RequestResult result = engine.generate(r);
  EXPECT_EQ(result.reason, FinishReason::ContextFull);
  EXPECT_NE(result.error.find("12"), std::string::npos) << result.error;
  const std::vector<TokenId>& solo = solo_run(model, story_prompts()[1], 10).generated;
  EXPECT_EQ(result.generated, std::vector<TokenId>(solo.begin(), solo.begin() + 1));
}

TEST(SchedulerErrors, GenerationStopsWithContextFullWhenTheCacheHoldsTheWholeContext) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options(64));
  Recorded rec;
  RequestId id = 0;
  std::int64_t most_cached = 0;
  RequestCallbacks cb = record_into(rec);
  cb.on_token = [&, record = cb.on_token](const TokenEvent& ev) {
    record(ev);
    const SeqId seq = engine.scheduler().sequence_of(id);
    most_cached = std::max(most_cached, engine.kv_cache().n_tokens(seq));
  };
  id = engine.submit(greedy_request(engine, story_prompts()[0], 200), cb);
  run_bounded(engine);
  const RequestResult& result = rec.result;
  EXPECT_EQ(result.reason, FinishReason::ContextFull);
  EXPECT_NE(result.error.find("64"), std::string::npos) << result.error;
  EXPECT_EQ(most_cached, 64);
  ASSERT_EQ(result.generated.size(), 64u - 5u + 1u);
  const std::vector<TokenId>& solo = solo_run(model, story_prompts()[0], 200).generated;
  EXPECT_TRUE(std::equal(result.generated.begin(), result.generated.end(), solo.begin()));
  EXPECT_EQ(engine.kv_cache().usage().n_used, 0);
}

TEST(SchedulerErrors, ForkOfARequestThatIsNotRunningIsAUsageError) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  EXPECT_THROW(engine.fork(999), UsageError);
  const RequestId waiting = engine.submit(greedy_request(engine, story_prompts()[0], 5));
  EXPECT_THROW(engine.fork(waiting), UsageError);  // queued: nothing cached yet
  run_bounded(engine);
  EXPECT_THROW(engine.fork(waiting), UsageError);  // finished
}

// A cancel meant for the old engine's request, arriving after a model switch, must not end
// the new engine's first request: ids are never reused by another engine.
TEST(SchedulerCancel, AStaleCancelFromAnotherEngineCancelsNothing) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  RequestId old_id = 0;
  {
    Engine old_engine(model, small_options());
    old_id = old_engine.submit(greedy_request(old_engine, story_prompts()[0], 4), {});
  }
  Engine engine(model, small_options());
  Recorded a;
  const RequestId id = engine.submit(greedy_request(engine, story_prompts()[0], 8), record_into(a));
  EXPECT_NE(id, old_id);
  engine.cancel(old_id);  // unknown here: ignored
  while (engine.step()) {
  }
  ASSERT_EQ(a.n_finished, 1);
  EXPECT_EQ(a.result.reason, FinishReason::Length);
}

}  // namespace
}  // namespace kvscope
