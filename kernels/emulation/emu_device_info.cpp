// The emulated device and the error state of the CUDA emulation: one sm_86-like GPU, the last
// error of each host thread, and the sticky error a fault in a kernel leaves behind (as on the
// device, where the context is then unusable: every later call returns it).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>

#include "emu_internal.h"
#include "emu_runtime_api.h"

namespace kvscope::emu {

namespace {

thread_local cudaError_t t_last = cudaSuccess;
thread_local std::string t_detail;
thread_local cudaError_t t_detail_for = cudaSuccess;
std::atomic<cudaError_t> g_sticky{cudaSuccess};
thread_local int t_device = 0;

bool breaks_context(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorAssert:
    case cudaErrorIllegalInstruction:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorInvalidPc:
    case cudaErrorInvalidAddressSpace:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::size_t device_memory_bytes() {
  static const std::size_t bytes = [] {
    const char* v = std::getenv("KVSCOPE_EMU_DEVICE_MEMORY");
    const unsigned long long n = v ? std::strtoull(v, nullptr, 10) : 0;
    return n > 0 ? static_cast<std::size_t>(n) : std::size_t{2} << 30;
  }();
  return bytes;
}

void set_error(cudaError_t err, std::string detail) {
  if (err == cudaSuccess) return;
  t_last = err;
  if (!detail.empty() || t_detail_for != err) {
    t_detail = std::move(detail);
    t_detail_for = err;
  }
  if (breaks_context(err)) {
    cudaError_t none = cudaSuccess;
    if (g_sticky.compare_exchange_strong(none, err)) {
      // the test or program that sees the error names the call; the kernel's detail goes here
      std::fprintf(stderr, "[cuda emulation] %s: %s\n", cudaGetErrorName(err), t_detail.c_str());
    }
  }
}

cudaError_t sticky_error() {
  return g_sticky.load();
}

cudaError_t result(cudaError_t err) {
  if (const cudaError_t s = sticky_error(); s != cudaSuccess) return s;
  if (err != cudaSuccess) set_error(err);
  return err;
}

}  // namespace kvscope::emu

using kvscope::emu::result;

cudaError_t cudaGetLastError() {
  const cudaError_t s = kvscope::emu::sticky_error();
  const cudaError_t last = kvscope::emu::t_last;
  kvscope::emu::t_last = cudaSuccess;
  return s != cudaSuccess ? s : last;
}

cudaError_t cudaPeekAtLastError() {
  const cudaError_t s = kvscope::emu::sticky_error();
  return s != cudaSuccess ? s : kvscope::emu::t_last;
}

const char* cudaGetErrorName(cudaError_t err) {
  switch (err) {
#define KVSCOPE_EMU_NAME(e) \
  case e:                   \
    return #e;
    KVSCOPE_EMU_NAME(cudaSuccess)
    KVSCOPE_EMU_NAME(cudaErrorInvalidValue)
    KVSCOPE_EMU_NAME(cudaErrorMemoryAllocation)
    KVSCOPE_EMU_NAME(cudaErrorInitializationError)
    KVSCOPE_EMU_NAME(cudaErrorInsufficientDriver)
    KVSCOPE_EMU_NAME(cudaErrorInvalidConfiguration)
    KVSCOPE_EMU_NAME(cudaErrorInvalidDevice)
    KVSCOPE_EMU_NAME(cudaErrorNoDevice)
    KVSCOPE_EMU_NAME(cudaErrorNoKernelImageForDevice)
    KVSCOPE_EMU_NAME(cudaErrorECCUncorrectable)
    KVSCOPE_EMU_NAME(cudaErrorInvalidResourceHandle)
    KVSCOPE_EMU_NAME(cudaErrorNotReady)
    KVSCOPE_EMU_NAME(cudaErrorIllegalAddress)
    KVSCOPE_EMU_NAME(cudaErrorLaunchOutOfResources)
    KVSCOPE_EMU_NAME(cudaErrorLaunchTimeout)
    KVSCOPE_EMU_NAME(cudaErrorHardwareStackError)
    KVSCOPE_EMU_NAME(cudaErrorIllegalInstruction)
    KVSCOPE_EMU_NAME(cudaErrorMisalignedAddress)
    KVSCOPE_EMU_NAME(cudaErrorInvalidAddressSpace)
    KVSCOPE_EMU_NAME(cudaErrorInvalidPc)
    KVSCOPE_EMU_NAME(cudaErrorLaunchFailure)
    KVSCOPE_EMU_NAME(cudaErrorAssert)
    KVSCOPE_EMU_NAME(cudaErrorContextIsDestroyed)
    KVSCOPE_EMU_NAME(cudaErrorDevicesUnavailable)
    KVSCOPE_EMU_NAME(cudaErrorStreamCaptureUnsupported)
    KVSCOPE_EMU_NAME(cudaErrorStreamCaptureInvalidated)
    KVSCOPE_EMU_NAME(cudaErrorGraphExecUpdateFailure)
    KVSCOPE_EMU_NAME(cudaErrorUnknown)
#undef KVSCOPE_EMU_NAME
  }
  return "cudaErrorUnknown";
}

// The device's wording, and for the error this thread saw last, what the emulation found.
const char* cudaGetErrorString(cudaError_t err) {
  const char* base = "unknown error";
  switch (err) {
    case cudaSuccess:
      base = "no error";
      break;
    case cudaErrorInvalidValue:
      base = "invalid argument";
      break;
    case cudaErrorMemoryAllocation:
      base = "out of memory";
      break;
    case cudaErrorInvalidConfiguration:
      base = "invalid configuration argument";
      break;
    case cudaErrorNoDevice:
      base = "no CUDA-capable device is detected";
      break;
    case cudaErrorIllegalAddress:
      base = "an illegal memory access was encountered";
      break;
    case cudaErrorMisalignedAddress:
      base = "misaligned address";
      break;
    case cudaErrorLaunchFailure:
      base = "unspecified launch failure";
      break;
    case cudaErrorStreamCaptureUnsupported:
      base = "operation not permitted when stream is capturing";
      break;
    case cudaErrorStreamCaptureInvalidated:
      base = "operation failed due to a previous error during capture";
      break;
    case cudaErrorGraphExecUpdateFailure:
      base =
          "the graph update was not performed because it included changes which violated "
          "constraints specific to instantiated graph update";
      break;
    default:
      base = cudaGetErrorName(err);
      break;
  }
  thread_local std::string text;
  text = base;
  if (err != cudaSuccess && err == kvscope::emu::t_detail_for && !kvscope::emu::t_detail.empty())
    text += " [CUDA emulation: " + kvscope::emu::t_detail + "]";
  return text.c_str();
}

// KVSCOPE_EMU_NO_DEVICE=1: the machine has no GPU, as the device runtime reports it (read at
// each call, so a test can turn it on and off around what it checks).
cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return result(cudaErrorInvalidValue);
  const char* none = std::getenv("KVSCOPE_EMU_NO_DEVICE");
  if (none && std::string_view(none) == "1") {
    *count = 0;
    return result(cudaErrorNoDevice);
  }
  *count = 1;
  return result(cudaSuccess);
}

cudaError_t cudaGetDevice(int* device) {
  if (!device) return result(cudaErrorInvalidValue);
  *device = kvscope::emu::t_device;
  return result(cudaSuccess);
}

cudaError_t cudaSetDevice(int device) {
  if (device != 0) return result(cudaErrorInvalidDevice);
  kvscope::emu::t_device = device;
  return result(cudaSuccess);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  namespace emu = kvscope::emu;
  if (!prop) return result(cudaErrorInvalidValue);
  if (device != 0) return result(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "KVScope CUDA emulation (CPU, sm_%d%d)",
                emu::kComputeMajor, emu::kComputeMinor);
  prop->totalGlobalMem = emu::device_memory_bytes();
  prop->sharedMemPerBlock = emu::kSharedPerBlock;
  prop->sharedMemPerBlockOptin = emu::kSharedPerBlockOptin;
  prop->maxThreadsPerBlock = emu::kMaxThreadsPerBlock;
  prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
  prop->warpSize = 32;
  prop->major = emu::kComputeMajor;
  prop->minor = emu::kComputeMinor;
  prop->multiProcessorCount = emu::kSmCount;
  prop->l2CacheSize = emu::kL2Bytes;
  return result(cudaSuccess);
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  namespace emu = kvscope::emu;
  if (!value) return result(cudaErrorInvalidValue);
  if (device != 0) return result(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = emu::kMaxThreadsPerBlock;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = static_cast<int>(emu::kSharedPerBlock);
      break;
    case cudaDevAttrMultiProcessorCount:
      *value = emu::kSmCount;
      break;
    case cudaDevAttrComputeCapabilityMajor:
      *value = emu::kComputeMajor;
      break;
    case cudaDevAttrComputeCapabilityMinor:
      *value = emu::kComputeMinor;
      break;
    case cudaDevAttrL2CacheSize:
      *value = emu::kL2Bytes;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = static_cast<int>(emu::kSharedPerBlockOptin);
      break;
    default:
      return result(cudaErrorInvalidValue);
  }
  return result(cudaSuccess);
}

cudaError_t cudaDeviceReset() {
  return result(cudaSuccess);
}
