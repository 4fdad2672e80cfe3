// StepGraph: kernels captured once and replayed read the device memory of their replay (new
// input values, new results), a new key is applied by cudaGraphExecUpdate or a new
// instantiation, results equal an eager run bit for bit, and a capture that cannot work turns
// graphs off with the reason while the callable still runs. The first tests need no GPU.
// PinnedStaging, the graphs' upload companion, is tested here too.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cuda_check.h"
#include "backend/kernel_launchers.h"
#include "backend/step_graph.h"
#include "kernel_test_support.h"

namespace kvscope {
namespace {

using cuda::StepGraph;
using cuda::StepGraphKey;
using test::device_zeros;
using test::random_floats;
using test::to_device;

TEST(StepGraphKey, EqualOnlyWhenEveryWordIsEqual) {
  const int a = 0, b = 0;
  StepGraphKey k1, k2, k3;
  k1.add(7).add(&a);
  k2.add(7).add(&a);
  k3.add(7).add(&b);
  EXPECT_EQ(k1, k2);
  EXPECT_FALSE(k1 == k3);
  EXPECT_FALSE(k1 == StepGraphKey{}.add(7));
  EXPECT_TRUE(StepGraphKey{}.empty());
}

TEST(StepGraph, OffFromTheStartRunsEveryStepEagerly) {
  StepGraph graph(nullptr, "turned off by the test");
  int calls = 0;
  const StepGraphKey key = StepGraphKey{}.add(1);
  for (int i = 0; i < 3; ++i) graph.run(key, [&] { ++calls; });
  EXPECT_EQ(calls, 3);
  EXPECT_FALSE(graph.enabled());
  EXPECT_EQ(graph.off_reason(), "turned off by the test");
  EXPECT_EQ(graph.stats().eager, 3);
  EXPECT_EQ(graph.stats().captures + graph.stats().replays, 0);
}

// The legacy default stream cannot be captured (and without a driver nothing can): the
// repeated key's capture fails at cudaStreamBeginCapture, graphs turn off naming it, and every
// step still runs.
TEST(StepGraph, ACaptureThatCannotBeginTurnsGraphsOffAndTheStepStillRuns) {
  StepGraph graph(cudaStreamLegacy);
  int calls = 0;
  const StepGraphKey key = StepGraphKey{}.add(1);
  graph.run(key, [&] { ++calls; });  // warm-up, eager
  EXPECT_TRUE(graph.enabled());
  graph.run(key, [&] { ++calls; });  // capture refused, eager
  graph.run(key, [&] { ++calls; });  // off: eager
  EXPECT_EQ(calls, 3);
  EXPECT_FALSE(graph.enabled());
  EXPECT_NE(graph.off_reason().find("cudaStreamBeginCapture"), std::string::npos)
      << graph.off_reason();
  EXPECT_EQ(graph.stats().eager, 3);
  EXPECT_EQ(graph.stats().replays, 0);
}

// A non-blocking stream of the test's own, as the backend uses.
class StepGraphOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    KVSCOPE_REQUIRE_CUDA();
    KVSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }

  // The test helpers allocate, zero and upload through the legacy stream, which does not
  // order with a non-blocking one: wait for all of it before the stream's work starts.
  static void settle() { KVSCOPE_CUDA_CHECK(cudaDeviceSynchronize()); }

  // Copies `host` into `dst` in stream order (a legacy-stream copy would not order with it).
  void upload(const std::vector<float>& host, cuda::DeviceBuffer& dst) {
    KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst.get(), host.data(), host.size() * sizeof(float),
                                       cudaMemcpyHostToDevice, stream_));
  }
  std::vector<float> download(const cuda::DeviceBuffer& src, std::size_t n) {
    KVSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return test::from_device<float>(src, n);
  }

  cudaStream_t stream_ = nullptr;
};

// Expects got == x0 + y + y element by element, bit for bit (two in-place adds).
void expect_two_adds(const std::vector<float>& got, const std::vector<float>& x0,
                     const std::vector<float>& y, const std::string& what) {
  ASSERT_EQ(got.size(), x0.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], (x0[i] + y[i]) + y[i]) << what << " [" << i << "]";
  }
}

TEST_F(StepGraphOnDevice, ReplaysReadTheInputValuesOfTheirOwnStep) {
  const int n = 1000;
  const auto y = random_floats(n, 1);
  auto dx = device_zeros<float>(n);
  auto dy = to_device(y);
  settle();
  StepGraph graph(stream_);
  const StepGraphKey key = StepGraphKey{}.add(dx.get()).add(dy.get()).add(n);
  const auto launches = [&] {
    cuda::launch_add_in_place(dx.as<float>(), dy.as<float>(), n, stream_);
    cuda::launch_add_in_place(dx.as<float>(), dy.as<float>(), n, stream_);
  };
  for (int step = 0; step < 4; ++step) {
    const auto x0 = random_floats(n, 100 + static_cast<std::uint32_t>(step));
    upload(x0, dx);
    graph.run(key, launches);
    expect_two_adds(download(dx, n), x0, y, "step " + std::to_string(step));
  }
  EXPECT_TRUE(graph.enabled()) << graph.off_reason();
  EXPECT_EQ(graph.stats().eager, 1);  // the warm-up
  EXPECT_EQ(graph.stats().captures, 1);
  EXPECT_EQ(graph.stats().instantiations, 1);
  EXPECT_EQ(graph.stats().replays, 3);
}

TEST_F(StepGraphOnDevice, ANewKeyIsAppliedToTheGraphInPlace) {
  const int n = 777;
  const auto y1 = random_floats(n, 1), y2 = random_floats(n, 2);
  auto dx1 = device_zeros<float>(n), dx2 = device_zeros<float>(n);
  auto dy1 = to_device(y1), dy2 = to_device(y2);
  settle();
  StepGraph graph(stream_);
  // the same two kernels over other buffers: same topology, other arguments
  const auto step = [&](cuda::DeviceBuffer& x, const cuda::DeviceBuffer& y,
                        const std::vector<float>& y_host, std::uint32_t seed) {
    const StepGraphKey key = StepGraphKey{}.add(x.get()).add(y.get());
    const auto x0 = random_floats(n, seed);
    upload(x0, x);
    graph.run(key, [&] {
      cuda::launch_add_in_place(x.as<float>(), y.as<float>(), n, stream_);
      cuda::launch_add_in_place(x.as<float>(), y.as<float>(), n, stream_);
    });
    expect_two_adds(download(x, n), x0, y_host, "seed " + std::to_string(seed));
  };
  step(dx1, dy1, y1, 10);  // eager
  step(dx1, dy1, y1, 11);  // capture, instantiate
  step(dx2, dy2, y2, 12);  // new key: eager
  step(dx2, dy2, y2, 13);  // capture, update
  step(dx2, dy2, y2, 14);  // replay
  EXPECT_TRUE(graph.enabled()) << graph.off_reason();
  EXPECT_EQ(graph.stats().captures, 2);
  EXPECT_EQ(graph.stats().instantiations, 1);
  EXPECT_EQ(graph.stats().updates, 1);
  EXPECT_EQ(graph.stats().replays, 3);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(StepGraphOnDevice, AChangedTopologyIsInstantiatedAnew) {
  const int n = 300;
  const auto g = random_floats(n, 1, 4.0f), u = random_floats(n, 2);
  auto dg = to_device(g), du = to_device(u), dout = device_zeros<float>(n);
  settle();
  StepGraph graph(stream_);
  for (const int kernels : {1, 1, 2, 2, 2}) {  // the second kernel: one node more
    graph.run(StepGraphKey{}.add(kernels), [&] {
      cuda::launch_swiglu(dg.as<float>(), du.as<float>(), dout.as<float>(), n, stream_);
      if (kernels == 2) cuda::launch_add_in_place(dout.as<float>(), du.as<float>(), n, stream_);
    });
    const auto got = download(dout, n);
    for (int i = 0; i < n; ++i) {
      const float s = g[i] / (1.0f + std::exp(-g[i])) * u[i];
      ASSERT_NEAR(got[i], kernels == 2 ? s + u[i] : s, 1e-5f) << kernels << " kernels, " << i;
    }
  }
  EXPECT_TRUE(graph.enabled()) << graph.off_reason();
  EXPECT_EQ(graph.stats().captures, 2);
  EXPECT_EQ(graph.stats().instantiations, 2);
  EXPECT_EQ(graph.stats().updates, 0);
  EXPECT_EQ(graph.stats().replays, 3);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // the refused update left no error behind
}

TEST_F(StepGraphOnDevice, GraphResultsEqualTheEagerRunBitForBit) {
  for (const int n : {1, 33, 4099}) {
    const auto g = random_floats(n, 1, 6.0f), u = random_floats(n, 2), b = random_floats(n, 3);
    std::vector<std::vector<float>> results;
    for (const bool graphs : {false, true}) {
      auto dg = to_device(g), du = to_device(u), db = to_device(b);
      auto dx = device_zeros<float>(n);
      settle();
      StepGraph graph(stream_, graphs ? "" : "eager reference");
      for (int step = 0; step < 3; ++step) {  // eager, captured, replayed
        graph.run(StepGraphKey{}.add(n), [&] {
          cuda::launch_swiglu(dg.as<float>(), du.as<float>(), dg.as<float>(), n, stream_);
          cuda::launch_add_bias(dg.as<float>(), db.as<float>(), 1, n, stream_);
          cuda::launch_add_in_place(dx.as<float>(), dg.as<float>(), n, stream_);
        });
      }
      EXPECT_EQ(graph.stats().replays, graphs ? 2 : 0);
      results.push_back(download(dx, static_cast<std::size_t>(n)));
    }
    EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)),
              0)
        << "n " << n;
  }
}

// A synchronise inside the captured region is not capturable: the capture fails, is ended
// cleanly, graphs turn off naming why, and the step runs eagerly with the right result.
TEST_F(StepGraphOnDevice, AFailedCaptureTurnsGraphsOffAndTheStepStillRuns) {
  const int n = 100;
  const auto y = random_floats(n, 1);
  auto dx = device_zeros<float>(n);
  auto dy = to_device(y);
  settle();
  StepGraph graph(stream_);
  const StepGraphKey key = StepGraphKey{}.add(n);
  for (int step = 0; step < 3; ++step) {
    const auto x0 = random_floats(n, 20 + static_cast<std::uint32_t>(step));
    upload(x0, dx);
    graph.run(key, [&] {
      cuda::launch_add_in_place(dx.as<float>(), dy.as<float>(), n, stream_);
      KVSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
      cuda::launch_add_in_place(dx.as<float>(), dy.as<float>(), n, stream_);
    });
    expect_two_adds(download(dx, n), x0, y, "step " + std::to_string(step));
  }
  EXPECT_FALSE(graph.enabled());
  EXPECT_NE(graph.off_reason().find("capturing the decode step failed"), std::string::npos)
      << graph.off_reason();
  EXPECT_EQ(graph.stats().eager, 3);
  EXPECT_EQ(graph.stats().replays, 0);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  EXPECT_EQ(cudaStreamIsCapturing(stream_, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// Uploads through one reused pinned buffer land in stream order, each with its own values,
// also when a larger upload regrows the buffer.
TEST_F(StepGraphOnDevice, PinnedStagingUploadsEachStepsValuesInStreamOrder) {
  cuda::PinnedStaging staging;
  std::vector<cuda::DeviceBuffer> targets;
  std::vector<std::vector<float>> sent;
  for (const std::size_t n : {100u, 100u, 5000u, 7u}) {
    sent.push_back(random_floats(n, static_cast<std::uint32_t>(n + sent.size())));
    targets.push_back(device_zeros<float>(n));
    settle();
    staging.upload(sent.back().data(), n * sizeof(float), targets.back().get(), stream_);
  }
  EXPECT_TRUE(staging.pinned());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(download(targets[i], sent[i].size()), sent[i]) << "upload " << i;
  }
}

}  // namespace
}  // namespace kvscope
