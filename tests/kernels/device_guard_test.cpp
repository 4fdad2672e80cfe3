// ScopedDevice (device_guard.h) against a fake runtime: which device each call selects and
// what it restores, as on a machine with several GPUs and a caller whose current device is
// another one.
#include "backend/device_guard.h"

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/device_health.h"

namespace kvscope {
namespace {

// One fake runtime per test (the api holds plain function pointers).
struct FakeRuntime {
  int current = 0;
  int fail_set_to = -1;  // cudaSetDevice(this) fails
  std::vector<std::string> calls;
};
FakeRuntime* g_fake = nullptr;

int fake_get(int* d) {
  g_fake->calls.push_back("get");
  *d = g_fake->current;
  return 0;
}

int fake_set(int d) {
  g_fake->calls.push_back("set " + std::to_string(d));
  if (d == g_fake->fail_set_to) return static_cast<int>(cudaErrorInvalidDevice);
  g_fake->current = d;
  return 0;
}

const cuda::DeviceApi kFake{fake_get, fake_set};

class ScopedDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override { g_fake = &rt; }
  void TearDown() override { g_fake = nullptr; }
  FakeRuntime rt;
};

TEST_F(ScopedDeviceTest, SelectsTheDeviceForItsScopeAndRestoresTheCallersAfter) {
  rt.current = 0;
  {
    const cuda::ScopedDevice on(1, kFake);
    EXPECT_EQ(rt.current, 1);
  }
  EXPECT_EQ(rt.current, 0);
  EXPECT_EQ(rt.calls, (std::vector<std::string>{"get", "set 1", "set 0"}));
}

TEST_F(ScopedDeviceTest, CallsNothingMoreWhenTheDeviceIsAlreadyCurrent) {
  rt.current = 2;
  { const cuda::ScopedDevice on(2, kFake); }
  EXPECT_EQ(rt.calls, (std::vector<std::string>{"get"}));
  EXPECT_EQ(rt.current, 2);
}

TEST_F(ScopedDeviceTest, NestedGuardsUnwindInOrder) {
  rt.current = 0;
  {
    const cuda::ScopedDevice a(1, kFake);
    {
      const cuda::ScopedDevice b(3, kFake);
      EXPECT_EQ(rt.current, 3);
    }
    EXPECT_EQ(rt.current, 1);
  }
  EXPECT_EQ(rt.current, 0);
}

TEST_F(ScopedDeviceTest, ADeviceThatCannotBeSelectedIsAnErrorNamingTheCallAndNothingIsRestored) {
  rt.current = 0;
  rt.fail_set_to = 5;
  try {
    const cuda::ScopedDevice on(5, kFake);
    ADD_FAILURE() << "no error";
  } catch (const cuda::CudaError& e) {
    EXPECT_EQ(e.code(), static_cast<int>(cudaErrorInvalidDevice));
    EXPECT_NE(std::string(e.what()).find("cudaSetDevice (ScopedDevice)"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(rt.current, 0);
  EXPECT_EQ(rt.calls, (std::vector<std::string>{"get", "set 5"}));
}

}  // namespace
}  // namespace kvscope
