#include "backend/device_health.h"

#include <cuda_runtime.h>

#include <fmt/format.h>

namespace kvscope::cuda {

bool DeviceHealth::is_sticky(int cuda_error) {
  switch (static_cast<cudaError_t>(cuda_error)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorDevicesUnavailable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

void DeviceHealth::check() const {
  if (lost()) throw DeviceLostError(message_);
}

void DeviceHealth::run(const std::function<void()>& work,
                       const std::function<std::string()>& last_launch) {
  check();
  try {
    work();
  } catch (const CudaError& e) {
    if (!is_sticky(e.code())) throw;
    const std::string launch = last_launch();
    message_ = fmt::format(
        "the CUDA device is lost: {}{}. It cannot run anything more in this process: reload "
        "the model or restart (KVSCOPE_CUDA_SYNC=1 makes every launch wait, so the failing "
        "kernel itself is named)",
        e.what(),
        launch.empty() ? std::string() : fmt::format("; the last kernel launched was {}", launch));
    throw DeviceLostError(message_);
  }
}

}  // namespace kvscope::cuda
