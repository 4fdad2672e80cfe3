#include "cpu/thread_pool.h"

#include <algorithm>
#include <chrono>

#include "util/error.h"

namespace kvscope {

namespace {

// How long a thread spins on an atomic before it sleeps on it. The gaps between the
// parallel_for calls of one decode step are far shorter than this, so spinning this long
// keeps every dispatch in the fast path, while an idle pool goes to sleep within 0.1 ms.
constexpr auto kSpinBudget = std::chrono::microseconds(100);

// state_ layout: [generation:32][n_chunks:16][next:16].
constexpr std::uint64_t pack_state(std::uint32_t generation, int n_chunks) {
  return (static_cast<std::uint64_t>(generation) << 32) |
         (static_cast<std::uint64_t>(n_chunks) << 16);
}
constexpr std::uint32_t generation_of(std::uint64_t s) {
  return static_cast<std::uint32_t>(s >> 32);
}
constexpr int chunks_of(std::uint64_t s) {
  return static_cast<int>((s >> 16) & 0xffffu);
}
constexpr int next_of(std::uint64_t s) {
  return static_cast<int>(s & 0xffffu);
}

// Tells the core this is a spin-wait (saves power, frees the sibling hyper-thread).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Returns the first value of `a` for which keep_waiting is false: spins for kSpinBudget
// (yielding now and then, so an oversubscribed core can run the thread we wait for), then
// sleeps on the atomic until it changes.
template <typename T, typename Pred>
T spin_then_wait(const std::atomic<T>& a, Pred keep_waiting) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinBudget;
  for (int spin = 1;; ++spin) {
    const T v = a.load(std::memory_order_acquire);
    if (!keep_waiting(v)) return v;
    cpu_relax();
    if (spin % 64 == 0) {
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::yield();
    }
  }
  for (;;) {
    const T v = a.load(std::memory_order_acquire);
    if (!keep_waiting(v)) return v;
    a.wait(v, std::memory_order_acquire);
  }
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads) {
  if (n_threads < 1 || n_threads > kMaxThreads) {
    throw_error<UsageError>("thread count must be in 1..{} (got {})", kMaxThreads, n_threads);
  }
  workers_.reserve(static_cast<std::size_t>(n_threads - 1));
  for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  // A new generation with no chunks: every worker wakes, sees stop_ and leaves.
  state_.store(pack_state(generation_of(state_.load()) + 1, 0), std::memory_order_release);
  state_.notify_all();
  for (auto& t : workers_) t.join();
}

int ThreadPool::default_threads() {
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxThreads);
}

int ThreadPool::chunks_for(std::int64_t n_items, std::int64_t min_chunk) const {
  if (n_items <= 0) return 0;
  min_chunk = std::max<std::int64_t>(1, min_chunk);
  const std::int64_t wanted = std::max<std::int64_t>(1, n_items / min_chunk);  // each >= min_chunk
  return static_cast<int>(
      std::min<std::int64_t>(wanted, std::int64_t{n_threads_} * kChunksPerThread));
}

void ThreadPool::run(std::int64_t n_items, std::int64_t min_chunk, void* ctx, Callback callback) {
  const int n_chunks = chunks_for(n_items, min_chunk);
  if (n_chunks == 0) return;
  // One thread, one chunk, or a nested / concurrent call: run here, no dispatch.
  if (n_threads_ == 1 || n_chunks == 1 || busy_.exchange(true, std::memory_order_acquire)) {
    callback(ctx, 0, n_items);
    return;
  }
  job_ctx_ = ctx;
  job_callback_ = callback;
  job_items_ = n_items;
  error_ = nullptr;
  completed_.store(0, std::memory_order_relaxed);
  const std::uint32_t generation = generation_of(state_.load(std::memory_order_relaxed)) + 1;
  state_.store(pack_state(generation, n_chunks), std::memory_order_release);
  state_.notify_all();  // only a syscall when some worker is asleep

  claim_and_run(generation);
  spin_then_wait(completed_, [n_chunks](int done) { return done != n_chunks; });

  std::exception_ptr error = std::exchange(error_, nullptr);
  busy_.store(false, std::memory_order_release);
  if (error) std::rethrow_exception(error);
}

void ThreadPool::claim_and_run(std::uint32_t generation) noexcept {
  std::uint64_t s = state_.load(std::memory_order_acquire);
  while (generation_of(s) == generation && next_of(s) < chunks_of(s)) {
    if (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      continue;  // s now holds the fresh value
    }
    const int n_chunks = chunks_of(s);
    run_chunk(next_of(s), n_chunks);
    if (completed_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_chunks) {
      completed_.notify_one();  // the caller may be asleep waiting for the last chunk
    }
    s = state_.load(std::memory_order_acquire);
  }
}

void ThreadPool::run_chunk(int index, int n_chunks) noexcept {
  const auto [begin, end] = chunk(job_items_, n_chunks, index);
  if (begin == end) return;
  try {
    job_callback_(job_ctx_, begin, end);
  } catch (...) {
    std::lock_guard lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void ThreadPool::worker_loop() {
  std::uint32_t seen = 0;
  for (;;) {
    const std::uint64_t s =
        spin_then_wait(state_, [seen](std::uint64_t v) { return generation_of(v) == seen; });
    seen = generation_of(s);
    if (stop_.load(std::memory_order_acquire)) return;
    claim_and_run(seen);
  }
}

}  // namespace kvscope
