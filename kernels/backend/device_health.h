// Whether the backend's CUDA context can still run work. A sticky error (an illegal address,
// a launch failure, a device-side assert, ...) leaves the context unusable: every later CUDA
// call returns it again, so without this each later step would fail with a message naming
// whichever call happened to run first. After the first one the backend is "device lost":
// every request ends with one message naming the error, the call that reported it and the
// last kernel launched before it, and nothing more is sent to the device. CUDA-free header:
// the state machine is tested on the host with injected error codes.
#pragma once

#include <functional>
#include <string>

#include "util/error.h"

namespace kvscope::cuda {

// A failed CUDA call (cuda_check.h throws it): the message, and the cudaError_t code as int.
class CudaError : public Error {
 public:
  CudaError(int code, const std::string& message) : Error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// What every step of a backend whose device is lost throws.
class DeviceLostError : public Error {
 public:
  using Error::Error;
};

class DeviceHealth {
 public:
  // Whether a cudaError_t leaves the context unusable until the process ends.
  static bool is_sticky(int cuda_error);

  bool lost() const { return !message_.empty(); }
  // The device-lost message ("" while the device is usable).
  const std::string& message() const { return message_; }
  // Throws DeviceLostError(message()) once the device is lost.
  void check() const;
  // Runs one step's device work: DeviceLostError without running it when the device is lost;
  // a CudaError with a sticky code marks it lost and becomes DeviceLostError, naming the
  // error and `last_launch()` (the kernel launched last, cuda_check.h); any other error
  // passes through unchanged (the device stays usable).
  void run(const std::function<void()>& work, const std::function<std::string()>& last_launch);

 private:
  std::string message_;
};

}  // namespace kvscope::cuda
