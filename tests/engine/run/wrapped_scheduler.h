// A scheduler on the real stories260K model over a backend that wraps the CPU one: for tests
// that watch what the scheduler asks of its backend, or break it on purpose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "model/model.h"
#include "plan/kv_footprint.h"
#include "run/cpu_backend.h"
#include "run/scheduler/scheduler.h"
#include "support/generation_fixtures.h"
#include "support/test_data.h"

namespace kvscope::test {

// Passes every call to `inner`, except forward_greedy: that stays Backend's default, which
// runs this->forward, so a derived class that changes forward changes greedy steps too.
class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(Backend& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  void forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
               std::vector<float>& logits) override {
    inner_.forward(chunks, kv, logits);
  }
  bool uses_host_kv_storage() const override { return inner_.uses_host_kv_storage(); }
  MemoryInfo memory_info(const KvCacheManager& kv) const override { return inner_.memory_info(kv); }

 protected:
  Backend& inner_;
};

// B: a ForwardingBackend constructed from the CPU backend. One thread, kContext tokens, 64
// blocks of 16; skips without models/stories260K.gguf.
template <class B>
class WrappedScheduler : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto found = find_shared("models/stories260K.gguf");
    if (!found) GTEST_SKIP() << "needs models/stories260K.gguf in " << shared_dir();
    path_ = found->string();
    model_ = load_model(path_);
    tokenizer_ = make_tokenizer(*model_);
    CpuBackendOptions cpu;
    cpu.n_threads = 1;
    cpu.context_length = kContext;
    cpu_ = std::make_unique<CpuBackend>(*model_, cpu);
    backend_ = std::make_unique<B>(*cpu_);
    KvCacheConfig config = default_kv_config(model_->spec(), KvDtype::F16, KvDtype::F16, 16);
    config.max_context = kContext;
    config.n_blocks = 64;
    kv_ = std::make_unique<KvCacheManager>(config);
    scheduler_ = std::make_unique<Scheduler>(*backend_, *kv_, *tokenizer_, SchedulerOptions{});
  }

  // A greedy request for story prompt `prompt`.
  GenerationRequest request(std::size_t prompt, std::int64_t max_tokens) const {
    GenerationRequest r;
    r.prompt = tokenizer_->encode(story_prompts()[prompt], true);
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0;
    return r;
  }

  RequestId submit(std::size_t prompt, std::int64_t max_tokens, Recorded& rec) {
    return scheduler_->submit(request(prompt, max_tokens), record_into(rec));
  }

  void run() {
    for (int s = 0; s < 1000 && scheduler_->step(); ++s) {
    }
    EXPECT_TRUE(scheduler_->idle());
  }

  std::string path_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<CpuBackend> cpu_;
  std::unique_ptr<B> backend_;
  std::unique_ptr<KvCacheManager> kv_;
  std::unique_ptr<Scheduler> scheduler_;
};

}  // namespace kvscope::test
