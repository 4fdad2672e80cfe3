// A fixed set of worker threads for the CPU backend's data-parallel loops (matvec rows,
// attention heads). One pool per backend, never a global one. The calling thread takes part,
// so a pool of N threads starts N-1 std::threads, and N = 1 runs everything inline.
//
// parallel_for cuts [0, n_items) into a fixed set of contiguous chunks (static chunking: the
// cut depends only on n_items, min_chunk and N, never on timing, so results are bitwise
// reproducible). Threads claim chunks from one atomic counter; the caller claims too, so a
// worker that is slow to wake (or descheduled on a busy machine) never holds a loop up:
// whoever is running takes its share. A decode step calls this ~50 times, so dispatch is one
// atomic store that spinning workers see within about a microsecond; a worker that finds no
// job for 0.1 ms sleeps on a futex (C++20 atomic wait), so an idle engine burns no CPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace kvscope {

class ThreadPool {
 public:
  // n_threads in 1..kMaxThreads (UsageError otherwise): the caller plus n_threads - 1 workers.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // A sensible -t default: the hardware threads, at least 1.
  static int default_threads();

  // Calls fn(begin, end) on disjoint ranges covering [0, n_items), in parallel, and returns
  // when all have finished. Each range holds at least `min_chunk` items (except when
  // n_items is smaller), so tiny loops run inline instead of paying for a dispatch.
  // An exception thrown by fn is rethrown here (the first one, after all ranges finish).
  // Called from inside fn, or by a second thread while the pool is busy, it runs inline.
  template <typename Fn>
  void parallel_for(std::int64_t n_items, Fn&& fn, std::int64_t min_chunk = 1) {
    using F = std::remove_reference_t<Fn>;
    run(n_items, min_chunk, &fn, [](void* ctx, std::int64_t begin, std::int64_t end) {
      (*static_cast<F*>(ctx))(begin, end);
    });
  }

  // How many chunks parallel_for cuts n_items into: up to kChunksPerThread per thread (so
  // a fast thread can take over part of a slow one's share), each >= min_chunk items.
  int chunks_for(std::int64_t n_items, std::int64_t min_chunk) const;
  // Chunk `index` of `n_chunks` over n_items: [begin, end).
  static std::pair<std::int64_t, std::int64_t> chunk(std::int64_t n_items, int n_chunks,
                                                     int index) {
    return {n_items * index / n_chunks, n_items * (index + 1) / n_chunks};
  }

  static constexpr int kChunksPerThread = 4;
  static constexpr int kMaxThreads = 4096;  // the chunk counter packs counts into 16 bits

 private:
  using Callback = void (*)(void* ctx, std::int64_t begin, std::int64_t end);

  void run(std::int64_t n_items, std::int64_t min_chunk, void* ctx, Callback callback);
  void worker_loop();
  void claim_and_run(std::uint32_t generation) noexcept;
  void run_chunk(int index, int n_chunks) noexcept;

  const int n_threads_;
  std::vector<std::thread> workers_;

  // The current job, written by the caller before it publishes state_ (release). A thread
  // reads it only after claiming one of its chunks (acquire), and the caller does not
  // overwrite it until every chunk is done, so a worker waking late never sees a torn job.
  void* job_ctx_ = nullptr;
  Callback job_callback_ = nullptr;
  std::int64_t job_items_ = 0;

  // [generation:32][n_chunks:16][next chunk to claim:16]. Claims are compare-exchanges, so
  // a thread still holding an old generation can never claim a chunk of a newer job.
  std::atomic<std::uint64_t> state_{0};
  std::atomic<int> completed_{0};  // chunks of the current job that have finished
  std::atomic<bool> busy_{false};  // a parallel_for is in flight
  std::atomic<bool> stop_{false};

  std::mutex error_mutex_;
  std::exception_ptr error_;  // first exception thrown by a chunk of the current job
};

}  // namespace kvscope
