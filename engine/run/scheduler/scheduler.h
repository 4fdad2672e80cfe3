// Continuous batching over the paged KV cache. Each step the scheduler gathers one token
// for every sequence that is decoding and prompt chunks for sequences that are prefilling
// (up to max_batch_tokens in all), runs one backend forward over them, samples, streams
// the text and finishes what is done. Sequences join and leave between steps.
//
// The context length is what the KV cache holds: a sequence's prompt and generated tokens
// are cached up to max_context, and the token sampled from the last cached position is
// still generated (llama.cpp's n_ctx means the same).
//
// Out of blocks: a sequence that needs a block preempts the running sequences admitted
// after it, newest first (their blocks are freed and their tokens recomputed when blocks
// are free again); the others go on with unchanged output. A sequence with no newer one to
// preempt waits for the older ones; one that cannot grow even alone finishes with
// ContextFull. Each chunk is reserved in the cache as it is planned, so a step never plans
// more than the pool holds.
//
// Kept prefixes (prefix_cache.h): a request with keep_cache leaves its cached tokens in the
// cache when it ends. A request admitted later forks the kept sequence with the longest
// common prefix of its prompt (all but the prompt's last token at most, which is run for the
// logits) and prefills only the rest. Kept prefixes give way first whenever a running or
// waiting sequence needs blocks. With a sliding window a prefix is shared only while the
// window still holds the blocks its next token would read.
//
// A step reads top to bottom in step(): plan (decodes, prompt chunks, admissions, making
// room as it goes: scheduler_planning.cpp), run (one backend forward), emit (sample, stream
// through each request's ReplyStream, finish: scheduler_output.cpp).
//
// Not thread-safe except cancel(): one thread calls submit/fork/step.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "run/backend.h"
#include "run/request.h"
#include "run/scheduler/prefix_cache.h"
#include "text/tokenizer.h"

namespace kvscope {

struct SchedulerOptions {
  std::int64_t max_batch_tokens = 512;  // tokens per forward step (prefill chunk budget)
  std::int64_t max_running = 64;        // sequences decoded together
};

struct SchedulerStats {
  std::int64_t steps = 0;
  std::int64_t prompt_tokens = 0;  // tokens run as prompt (prefill, including recompute)
  std::int64_t decode_tokens = 0;  // tokens run one per sequence per step
  std::int64_t preemptions = 0;
  std::int64_t reused_tokens = 0;  // prompt tokens shared from kept prefixes
  std::int64_t evictions = 0;      // kept prefixes released to make room
};

class Scheduler {
 public:
  // logits_per_row: the model's output rows (ModelSpec::vocab_size), 0 for the tokenizer's
  // vocab_size. A padded model has more rows than the tokenizer has tokens (32001 vs 32000):
  // the ids past the tokenizer's are never sampled (as if their logits were -inf), and a
  // backend's greedy pick is not used for such a model, since it could be one of them.
  Scheduler(Backend& backend, KvCacheManager& kv, const Tokenizer& tokenizer,
            SchedulerOptions options, std::int64_t logits_per_row = 0);
  ~Scheduler();

  // Queues a request. Throws UsageError for an empty prompt, a prompt id outside both the
  // tokenizer's vocab and the model's rows, max_tokens < 1 or bad sampling settings, and
  // CapacityError when the prompt cannot fit the context or the whole KV pool (naming both
  // numbers).
  RequestId submit(GenerationRequest request, RequestCallbacks callbacks);
  // A new request continuing `parent` (running, with tokens in the cache): it shares the
  // parent's blocks (copy-on-write) and generates up to the parent's max_tokens.
  RequestId fork(RequestId parent, RequestCallbacks callbacks);
  // Safe from any thread: the request finishes (Cancelled) at the start of the next step.
  void cancel(RequestId id);

  // One batched forward step. Returns false when there was nothing to do (or nothing is
  // left once cancelled requests have finished). A failing forward pass ends the requests
  // of that step with FinishReason::Error and its message; the others go on.
  bool step();
  // Releases the prefix the ended request `id` kept (nothing when it kept none).
  void release_cache(RequestId id) { prefixes_.release(id); }
  void release_all_caches() { prefixes_.release_all(); }
  // Kept prefixes still in the cache.
  std::int64_t n_kept() const { return prefixes_.size(); }
  bool idle() const { return running_.empty() && waiting_.empty(); }
  std::int64_t n_running() const { return static_cast<std::int64_t>(running_.size()); }
  std::int64_t n_waiting() const { return static_cast<std::int64_t>(waiting_.size()); }
  const SchedulerStats& stats() const { return stats_; }
  // The KV sequence of a live request or of a kept prefix (-1 when neither).
  SeqId sequence_of(RequestId id) const;

 private:
  struct Active;
  struct Planned {
    Active* active;
    std::int64_t n;  // tokens of this sequence run in the step
  };
  // What a step runs: chunks already reserved in the cache, in planning order.
  struct StepPlan {
    std::vector<Planned> chunks;
    std::int64_t budget = 0;  // tokens the step may still take
  };

  // Plan (scheduler_planning.cpp).
  void apply_cancellations();
  void plan_decodes(StepPlan& plan);
  void plan_prefills(StepPlan& plan);
  void admit_waiting(StepPlan& plan);
  void start_sequence(Active& a);
  void reserve(StepPlan& plan, Active& a, std::int64_t n);
  bool make_room(Active& a, std::int64_t n);
  void evict_prefixes_for(const Active& a, std::int64_t n);
  bool is_running(const Active* a) const;
  bool others_running(const Active& a) const;
  void end_full(Active& a);
  std::int64_t fitting_chunk(const Active& a, std::int64_t want) const;
  void preempt(Active& a);
  void remove_finished();
  // Run (scheduler.cpp).
  bool run_forward(const StepPlan& plan, bool greedy);
  bool picks_greedily(const StepPlan& plan) const;
  // Emit (scheduler_output.cpp).
  void emit_tokens(const StepPlan& plan, bool greedy);
  // Counts the step's tokens as cached; true when `a` now has a token to choose.
  bool advance(Active& a, std::int64_t n);
  void accept_token(Active& a, std::span<const float> row);
  void append_token(Active& a, TokenId token, TokenEvent& ev);
  void finish(Active& a, FinishReason reason, std::string error = {});
  void keep_or_free(Active& a, FinishReason reason);
  Active* find_running(RequestId id);

  Backend& backend_;
  KvCacheManager& kv_;
  const Tokenizer& tokenizer_;
  SchedulerOptions options_;
  std::int64_t n_spellable_;  // ids the tokenizer can spell: [0, tokenizer vocab_size)
  std::int64_t n_ids_;        // ids a prompt may hold: spellable and with an embedding row
  bool padded_rows_;          // the model has rows past the tokenizer's vocab
  SchedulerStats stats_;
  SeqId next_seq_ = 1;
  std::deque<std::unique_ptr<Active>> waiting_;   // FIFO; preempted requests go to the front
  std::vector<std::unique_ptr<Active>> running_;  // in admission order
  std::vector<float> logits_;
  std::vector<TokenId> picks_;     // [rows] a greedy step's tokens (Backend::forward_greedy)
  std::vector<BlockCopy> copies_;  // copy-on-write copies of the step being planned
  PrefixCache prefixes_;

  std::mutex cancel_mutex_;
  std::vector<RequestId> cancel_requests_;
  std::atomic<bool> has_cancel_{false};
};

}  // namespace kvscope
