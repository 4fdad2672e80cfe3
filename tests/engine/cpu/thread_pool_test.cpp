#include "cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "util/error.h"

namespace kvscope {
namespace {

using Range = std::pair<std::int64_t, std::int64_t>;

// Runs one parallel_for and returns the ranges fn saw, sorted.
std::vector<Range> ranges_of(ThreadPool& pool, std::int64_t n, std::int64_t min_chunk) {
  std::mutex mutex;
  std::vector<Range> ranges;
  pool.parallel_for(
      n,
      [&](std::int64_t begin, std::int64_t end) {
        std::lock_guard lock(mutex);
        ranges.emplace_back(begin, end);
      },
      min_chunk);
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}

TEST(ThreadPool, EveryItemIsVisitedExactlyOnceForAnyShape) {
  for (const int threads : {1, 2, 3, 4, 7}) {
    ThreadPool pool(threads);
    for (const std::int64_t n : {0, 1, 2, 3, 5, 7, 64, 1000, 1001}) {
      for (const std::int64_t min_chunk : {1, 3, 100}) {
        std::vector<std::atomic<int>> visits(static_cast<std::size_t>(n));
        pool.parallel_for(
            n,
            [&](std::int64_t begin, std::int64_t end) {
              for (std::int64_t i = begin; i < end; ++i) visits[static_cast<std::size_t>(i)]++;
            },
            min_chunk);
        for (std::int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(visits[static_cast<std::size_t>(i)].load(), 1)
              << "item " << i << " of " << n << ", threads " << threads << ", min_chunk "
              << min_chunk;
        }
      }
    }
  }
}

TEST(ThreadPool, ChunksAreAFixedSplitThatDependsOnlyOnTheShape) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.chunks_for(1000, 1), 3 * ThreadPool::kChunksPerThread);
  EXPECT_EQ(pool.chunks_for(10, 1), 10);  // never more chunks than items
  EXPECT_EQ(pool.chunks_for(10, 5), 2);
  EXPECT_EQ(pool.chunks_for(10, 4), 2);  // chunks of 5: never below min_chunk
  EXPECT_EQ(pool.chunks_for(0, 1), 0);
  for (int call = 0; call < 20; ++call) {
    const auto ranges = ranges_of(pool, 1000, 1);
    ASSERT_EQ(ranges.size(), 12u);
    for (int i = 0; i < 12; ++i) {
      ASSERT_EQ(ranges[static_cast<std::size_t>(i)], ThreadPool::chunk(1000, 12, i));
    }
  }
  EXPECT_EQ(ThreadPool::chunk(10, 4, 0), Range(0, 2));
  EXPECT_EQ(ThreadPool::chunk(10, 4, 3), Range(7, 10));
}

TEST(ThreadPool, MinChunkLimitsHowManyThreadsShareALoop) {
  ThreadPool pool(4);
  EXPECT_EQ(ranges_of(pool, 10, 100), (std::vector<Range>{{0, 10}}));
  EXPECT_EQ(ranges_of(pool, 10, 5), (std::vector<Range>{{0, 5}, {5, 10}}));
}

TEST(ThreadPool, SingleThreadPoolRunsInlineOnTheCaller) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.size(), 1);
  std::thread::id seen;
  pool.parallel_for(100, [&](std::int64_t begin, std::int64_t end) {
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 100);
    seen = std::this_thread::get_id();
  });
  EXPECT_EQ(seen, std::this_thread::get_id());
}

TEST(ThreadPool, ChunksRunConcurrentlyOnSeparateThreads) {
  // Each chunk waits until all three have started, which only threads running at the same
  // time can achieve (a 10 s timeout turns a hang into a failure).
  ThreadPool pool(3);
  std::atomic<int> started = 0;
  std::atomic<bool> timed_out = false;
  std::mutex mutex;
  std::vector<std::thread::id> ids;
  pool.parallel_for(3, [&](std::int64_t, std::int64_t) {
    {
      std::lock_guard lock(mutex);
      ids.push_back(std::this_thread::get_id());
    }
    started++;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 3) {
      if (std::chrono::steady_clock::now() > deadline) {
        timed_out = true;
        return;
      }
      std::this_thread::yield();
    }
  });
  EXPECT_FALSE(timed_out.load());
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_NE(std::find(ids.begin(), ids.end(), std::this_thread::get_id()), ids.end());
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
}

TEST(ThreadPool, ExceptionFromAWorkerReachesTheCallerAndThePoolStillWorks) {
  ThreadPool pool(4);
  EXPECT_THROW(pool.parallel_for(8,
                                 [](std::int64_t begin, std::int64_t) {
                                   if (begin >= 4) throw std::runtime_error("chunk failed");
                                 }),
               std::runtime_error);
  std::atomic<std::int64_t> sum = 0;
  pool.parallel_for(100, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950);
}

TEST(ThreadPool, NestedCallRunsInlineAndCoversItsItems) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> visits(9 * 5);
  pool.parallel_for(9, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      pool.parallel_for(5, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t j = b; j < e; ++j) visits[static_cast<std::size_t>(i * 5 + j)]++;
      });
    }
  });
  for (const auto& v : visits) EXPECT_EQ(v.load(), 1);
}

TEST(ThreadPool, ManyBackToBackCallsSeeEachOthersWrites) {
  // Each call reads what the previous one wrote (possibly on another thread), as the layers
  // of a forward pass do.
  ThreadPool pool(4);
  std::vector<std::int64_t> a(256, 0);
  std::vector<std::int64_t> b(256, 0);
  for (int call = 0; call < 5000; ++call) {
    pool.parallel_for(256, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const auto k = static_cast<std::size_t>(i);
        b[k] = a[255 - k] + 1;  // reads the element another chunk wrote last call
      }
    });
    std::swap(a, b);
  }
  for (const std::int64_t v : a) ASSERT_EQ(v, 5000);
}

TEST(ThreadPool, WakesWorkersThatWentToSleep) {
  ThreadPool pool(3);
  for (int call = 0; call < 5; ++call) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the spin budget
    std::atomic<int> chunks = 0;
    pool.parallel_for(3, [&](std::int64_t, std::int64_t) { chunks++; });
    EXPECT_EQ(chunks.load(), 3);
  }
}

TEST(ThreadPool, TwoCallerThreadsCanShareOnePool) {
  ThreadPool pool(2);
  std::atomic<std::int64_t> total = 0;
  auto caller = [&] {
    for (int call = 0; call < 2000; ++call) {
      pool.parallel_for(10, [&](std::int64_t begin, std::int64_t end) { total += end - begin; });
    }
  };
  std::thread other(caller);
  caller();
  other.join();
  EXPECT_EQ(total.load(), 2 * 2000 * 10);
}

TEST(ThreadPool, RejectsThreadCountsOutOfRange) {
  EXPECT_THROW(ThreadPool(0), UsageError);
  EXPECT_THROW(ThreadPool(-2), UsageError);
  EXPECT_THROW(ThreadPool(ThreadPool::kMaxThreads + 1), UsageError);
  EXPECT_GE(ThreadPool::default_threads(), 1);
}

}  // namespace
}  // namespace kvscope
