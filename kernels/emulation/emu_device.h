// The device side of the CUDA emulation: what a kernel body sees while one emulated thread
// runs it on the CPU. Each thread of a block is a fiber (emu_block.cpp); __syncthreads,
// __syncwarp, the shuffles and the votes suspend the fiber until every thread they wait for
// has arrived, so they are real barriers and real warp-wide exchanges. Misuse the hardware
// leaves undefined (a lane outside the mask, lanes of one warp at different collectives, a
// lane that has exited) fails the launch with a message instead.
#pragma once

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "emu_types.h"

namespace kvscope::emu {

// The emulated thread running now (one per OS thread: blocks run one after another).
struct ThreadContext {
  uint3 thread_idx;
  int lane = 0;
};
// The block running now.
struct BlockContext {
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
  unsigned char* dynamic_shared = nullptr;
  std::size_t dynamic_shared_bytes = 0;
};
extern thread_local constinit ThreadContext* t_thread;
extern thread_local constinit BlockContext* t_block;

// A device-side fault (a misaligned load, ...). Inside a kernel the launch fails with it; in
// host code that calls a device function (a test of the codecs) it is the exception, a
// std::logic_error as the codecs' host checks throw.
struct DeviceFault : std::logic_error {
  DeviceFault(cudaError_t c, const char* what) : std::logic_error(what), code(c) {}
  cudaError_t code;
};
[[noreturn]] void device_fault(cudaError_t code, const char* what);

// Waits at the block's barrier.
void block_barrier();

enum class WarpOp : std::uint8_t { Sync, Idx, Up, Down, Xor, Any, All, Ballot };
// One lane's part in a warp collective: the lanes of `mask` must all arrive at the same op.
struct WarpRequest {
  WarpOp op = WarpOp::Sync;
  unsigned mask = 0;
  int lane_arg = 0;  // the shuffle's b operand (source lane, delta or lane mask)
  int c = 0;         // the shuffle's c operand: segment mask << 8 | clamp
  const void* value = nullptr;
  void* result = nullptr;
  unsigned size = 0;
  int predicate = 0;
};
// Suspends the lane until the collective completes; returns the vote's result.
unsigned warp_collective(WarpRequest& request);

template <class T>
T shuffle(WarpOp op, unsigned mask, T value, int lane_arg, int width, bool clamp_high) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 16, "shuffle of an odd type");
  T out{};
  WarpRequest r;
  r.op = op;
  r.mask = mask;
  r.lane_arg = lane_arg;
  r.c = ((32 - width) << 8) | (clamp_high ? 0x1f : 0);
  r.value = &value;
  r.result = &out;
  r.size = sizeof(T);
  warp_collective(r);
  return out;
}

inline unsigned vote(WarpOp op, unsigned mask, int predicate) {
  WarpRequest r;
  r.op = op;
  r.mask = mask;
  r.predicate = predicate != 0;
  return warp_collective(r);
}

// The alignment the device demands of a load of T.
template <class T>
const T* check_aligned(const T* p) {
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) != 0)
    device_fault(cudaErrorMisalignedAddress, "misaligned load through __ldg");
  return p;
}

}  // namespace kvscope::emu

#define threadIdx (::kvscope::emu::t_thread->thread_idx)
#define blockIdx (::kvscope::emu::t_block->block_idx)
#define blockDim (::kvscope::emu::t_block->block_dim)
#define gridDim (::kvscope::emu::t_block->grid_dim)
inline constexpr int warpSize = 32;

// --- Barriers, shuffles, votes ------------------------------------------------------------

inline void __syncthreads() {
  kvscope::emu::block_barrier();
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  kvscope::emu::vote(kvscope::emu::WarpOp::Sync, mask, 0);
}
template <class T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize) {
  return kvscope::emu::shuffle(kvscope::emu::WarpOp::Idx, mask, var, src_lane, width, true);
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return kvscope::emu::shuffle(kvscope::emu::WarpOp::Up, mask, var, static_cast<int>(delta), width,
                               false);
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return kvscope::emu::shuffle(kvscope::emu::WarpOp::Down, mask, var, static_cast<int>(delta),
                               width, true);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize) {
  return kvscope::emu::shuffle(kvscope::emu::WarpOp::Xor, mask, var, lane_mask, width, true);
}
inline int __any_sync(unsigned mask, int predicate) {
  return static_cast<int>(kvscope::emu::vote(kvscope::emu::WarpOp::Any, mask, predicate));
}
inline int __all_sync(unsigned mask, int predicate) {
  return static_cast<int>(kvscope::emu::vote(kvscope::emu::WarpOp::All, mask, predicate));
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return kvscope::emu::vote(kvscope::emu::WarpOp::Ballot, mask, predicate);
}

// --- Memory -------------------------------------------------------------------------------

template <class T>
T __ldg(const T* p) {
  return *kvscope::emu::check_aligned(p);
}

// Blocks run one at a time on an OS thread, but two host threads may launch at once, so the
// atomics are real ones.
template <class T>
T atomicAdd(T* address, T value) {
  return std::atomic_ref<T>(*address).fetch_add(value);
}
namespace kvscope::emu {
// Replaces *address by value while `replaces(old, value)`; returns the old value.
template <class T, class Replaces>
T atomic_replace_if(T* address, T value, Replaces replaces) {
  std::atomic_ref<T> a(*address);
  T old = a.load();
  while (replaces(old, value) && !a.compare_exchange_weak(old, value)) {
  }
  return old;
}
}  // namespace kvscope::emu
template <class T>
T atomicMax(T* address, T value) {
  return kvscope::emu::atomic_replace_if(address, value, [](T old, T v) { return old < v; });
}
template <class T>
T atomicMin(T* address, T value) {
  return kvscope::emu::atomic_replace_if(address, value, [](T old, T v) { return v < old; });
}
template <class T>
T atomicCAS(T* address, T compare, T value) {
  std::atomic_ref<T>(*address).compare_exchange_strong(compare, value);
  return compare;
}
template <class T>
T atomicExch(T* address, T value) {
  return std::atomic_ref<T>(*address).exchange(value);
}

// --- The device's global math functions (min and max of floats ignore a NaN, as fminf) ------

template <class A, class B>
requires std::is_integral_v<A> && std::is_integral_v<B> std::common_type_t<A, B> min(A a, B b) {
  using T = std::common_type_t<A, B>;
  return static_cast<T>(b) < static_cast<T>(a) ? static_cast<T>(b) : static_cast<T>(a);
}
template <class A, class B>
requires std::is_integral_v<A> && std::is_integral_v<B> std::common_type_t<A, B> max(A a, B b) {
  using T = std::common_type_t<A, B>;
  return static_cast<T>(a) < static_cast<T>(b) ? static_cast<T>(b) : static_cast<T>(a);
}
inline float min(float a, float b) {
  return std::fmin(a, b);
}
inline float max(float a, float b) {
  return std::fmax(a, b);
}
inline double min(double a, double b) {
  return std::fmin(a, b);
}
inline double max(double a, double b) {
  return std::fmax(a, b);
}
using std::isfinite;
using std::isinf;
using std::isnan;

// --- Arithmetic intrinsics (the host compiles ISO C++: no contraction into FMAs) ----------

inline float __fadd_rn(float a, float b) {
  return a + b;
}
inline float __fsub_rn(float a, float b) {
  return a - b;
}
inline float __fmul_rn(float a, float b) {
  return a * b;
}
inline float __fdiv_rn(float a, float b) {
  return a / b;
}
inline float __fsqrt_rn(float a) {
  return std::sqrt(a);
}
inline float __frcp_rn(float a) {
  return 1.0f / a;
}
inline float __fmaf_rn(float a, float b, float c) {
  return std::fma(a, b, c);
}
inline float __saturatef(float a) {
  return a != a ? 0.0f : std::fmin(std::fmax(a, 0.0f), 1.0f);
}
inline float __expf(float a) {
  return std::exp(a);
}
inline float __uint_as_float(unsigned u) {
  return std::bit_cast<float>(u);
}
inline unsigned __float_as_uint(float f) {
  return std::bit_cast<unsigned>(f);
}
inline float __int_as_float(int i) {
  return std::bit_cast<float>(i);
}
inline int __float_as_int(float f) {
  return std::bit_cast<int>(f);
}
inline int __popc(unsigned x) {
  return std::popcount(x);
}
inline int __clz(int x) {
  return std::countl_zero(static_cast<unsigned>(x));
}
inline int __ffs(int x) {
  return x == 0 ? 0 : std::countr_zero(static_cast<unsigned>(x)) + 1;
}

// c + the sum of the products of the four signed bytes of a and b (IDP4A.S8.S8).
inline int __dp4a(int a, int b, int c) {
  for (int k = 0; k < 4; ++k) {
    c += static_cast<std::int8_t>(static_cast<unsigned>(a) >> (8 * k)) *
         static_cast<std::int8_t>(static_cast<unsigned>(b) >> (8 * k));
  }
  return c;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
  for (int k = 0; k < 4; ++k) c += ((a >> (8 * k)) & 0xffu) * ((b >> (8 * k)) & 0xffu);
  return c;
}

// Byte n of the result is byte s[4n + 2 : 4n] of the eight bytes {y, x} (x the low four).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const std::uint64_t bytes = (static_cast<std::uint64_t>(y) << 32) | x;
  unsigned r = 0;
  for (int n = 0; n < 4; ++n) {
    const unsigned pick = (s >> (4 * n)) & 7u;
    r |= static_cast<unsigned>((bytes >> (8 * pick)) & 0xffu) << (8 * n);
  }
  return r;
}
