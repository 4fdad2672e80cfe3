// The backend's "device lost" state (device_health.h) and the launch record it names, on the
// host: CUDA errors are injected by throwing them through the backend's own error path
// (throw_cuda_error), as a failing synchronize would.
#include "backend/device_health.h"

#include <cuda_runtime.h>

#include <string>

#include <gtest/gtest.h>

#include "backend/cuda_check.h"

namespace kvscope {
namespace {

using cuda::DeviceHealth;
using cuda::DeviceLostError;

std::string site() {
  return "launch_paged_attention (attention/paged_attention.cu:270)";
}

// A step whose synchronize reports `err`.
auto failing_step(cudaError_t err) {
  return [err] {
    cuda::throw_cuda_error(err, "cudaStreamSynchronize(stream)", "/src/kernels/backend/x.cpp", 7);
  };
}

TEST(DeviceHealth, TheErrorsThatLeaveTheContextUnusableAreSticky) {
  for (const cudaError_t e : {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorAssert,
                              cudaErrorIllegalInstruction, cudaErrorMisalignedAddress,
                              cudaErrorLaunchTimeout, cudaErrorHardwareStackError}) {
    EXPECT_TRUE(DeviceHealth::is_sticky(e)) << cudaGetErrorName(e);
  }
  for (const cudaError_t e :
       {cudaErrorMemoryAllocation, cudaErrorInvalidValue, cudaErrorInvalidConfiguration,
        cudaErrorLaunchOutOfResources, cudaErrorNoKernelImageForDevice, cudaSuccess}) {
    EXPECT_FALSE(DeviceHealth::is_sticky(e)) << cudaGetErrorName(e);
  }
}

TEST(DeviceHealth, AStickyErrorEndsTheStepAndEveryLaterOneWithOneMessage) {
  DeviceHealth h;
  int runs = 0;
  h.run([&] { ++runs; }, site);
  EXPECT_FALSE(h.lost());
  std::string first;
  try {
    h.run(failing_step(cudaErrorIllegalAddress), site);
    ADD_FAILURE() << "no error";
  } catch (const DeviceLostError& e) {
    first = e.what();
  }
  EXPECT_TRUE(h.lost());
  EXPECT_EQ(first, h.message());
  for (const char* part : {"the CUDA device is lost", "cudaErrorIllegalAddress",
                           "cudaStreamSynchronize(stream) (backend/x.cpp:7)",
                           "the last kernel launched was launch_paged_attention "
                           "(attention/paged_attention.cu:270)",
                           "KVSCOPE_CUDA_SYNC=1"}) {
    EXPECT_NE(first.find(part), std::string::npos) << part << "\n" << first;
  }
  // later steps: the same message, and the device is not touched
  for (int i = 0; i < 3; ++i) {
    try {
      h.run([&] { ++runs; }, site);
      ADD_FAILURE() << "a step ran on a lost device";
    } catch (const DeviceLostError& e) {
      EXPECT_EQ(std::string(e.what()), first);
    }
  }
  EXPECT_EQ(runs, 1);
  EXPECT_THROW(h.check(), DeviceLostError);
}

TEST(DeviceHealth, OtherErrorsPassThroughAndTheDeviceStaysUsable) {
  DeviceHealth h;
  EXPECT_THROW(h.run(failing_step(cudaErrorMemoryAllocation), site), CapacityError);
  EXPECT_THROW(h.run(failing_step(cudaErrorInvalidValue), site), cuda::CudaError);
  EXPECT_THROW(h.run([] { throw UsageError("a shape"); }, site), UsageError);
  EXPECT_FALSE(h.lost());
  EXPECT_NO_THROW(h.check());
  int runs = 0;
  h.run([&] { ++runs; }, site);
  EXPECT_EQ(runs, 1);
}

TEST(DeviceHealth, WithoutALaunchRecordedTheMessageSaysOnlyTheError) {
  DeviceHealth h;
  EXPECT_THROW(h.run(failing_step(cudaErrorLaunchFailure), [] { return std::string(); }),
               DeviceLostError);
  EXPECT_EQ(h.message().find("last kernel"), std::string::npos) << h.message();
}

TEST(LaunchRecord, TheLaunchCheckRecordsTheLauncherFileAndLine) {
  // no device here: the launch check's cudaGetLastError reports no driver, which it throws;
  // the launch is recorded before that
  try {
    KVSCOPE_CUDA_CHECK_LAUNCH();
  } catch (const Error&) {
  }
  const std::string last = cuda::last_launch();
  EXPECT_NE(last.find("TestBody (device_health_test.cpp:"), std::string::npos) << last;
}

}  // namespace
}  // namespace kvscope
