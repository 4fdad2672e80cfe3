#include "cpu/simd_dispatch.h"

#include <cstdlib>
#include <string_view>

#if KVSCOPE_X86_SIMD
#include <cpuid.h>
#endif

namespace kvscope {

namespace {

// The one piece of per-thread state: set only by CpuIsaCapScope (tests).
thread_local int thread_cap = 3;

bool allowed(int level) {
  return thread_cap >= level && cpu_isa_cap() >= level;
}

bool detect_avx() {
#if KVSCOPE_X86_SIMD
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool ssse3 = (c & (1u << 9)) != 0;
  const bool sse41 = (c & (1u << 19)) != 0;
  const bool osxsave = (c & (1u << 27)) != 0;
  const bool avx = (c & (1u << 28)) != 0;
  if (!(ssse3 && sse41 && osxsave && avx)) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  return (xcr0_lo & 0x6u) == 0x6u;  // XMM and YMM state saved by the OS
#else
  return false;
#endif
}

int read_isa_cap() {
  const char* env = std::getenv("KVSCOPE_CPU_ISA");
  const std::string_view v = env != nullptr ? env : "";
  if (v == "portable") return 0;
  if (v == "avx") return 1;
  if (v == "avx2") return 2;
  return 3;
}

bool detect_avx2_fma_f16c() {
#if KVSCOPE_X86_SIMD
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool fma = (c & (1u << 12)) != 0;
  const bool osxsave = (c & (1u << 27)) != 0;
  const bool avx = (c & (1u << 28)) != 0;
  const bool f16c = (c & (1u << 29)) != 0;
  if (!(fma && osxsave && avx && f16c)) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 0x6u) != 0x6u) return false;  // XMM and YMM state saved by the OS
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & (1u << 5)) != 0;  // AVX2
#else
  return false;
#endif
}

bool detect_avx512_vnni() {
#if KVSCOPE_X86_SIMD
  if (!detect_avx2_fma_f16c()) return false;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const bool f = (b & (1u << 16)) != 0, bw = (b & (1u << 30)) != 0, vl = (b & (1u << 31)) != 0;
  const bool vnni = (c & (1u << 11)) != 0;
  if (!(f && bw && vl && vnni)) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  return (xcr0_lo & 0xE6u) == 0xE6u;  // XMM, YMM, opmask and both ZMM halves saved
#else
  return false;
#endif
}

}  // namespace

bool cpu_has_avx() {
  static const bool available = detect_avx();
  return available;
}

int cpu_isa_cap() {
  static const int cap = read_isa_cap();
  return cap;
}

bool cpu_has_avx2_fma_f16c() {
  static const bool available = detect_avx2_fma_f16c();
  return available;
}

bool cpu_has_avx512_vnni() {
  static const bool available = detect_avx512_vnni();
  return available;
}

bool use_avx() {
  return cpu_has_avx() && allowed(1);
}

bool use_avx2_fma_f16c() {
  return cpu_has_avx2_fma_f16c() && allowed(2);
}

bool use_avx512_vnni() {
  return cpu_has_avx512_vnni() && allowed(3);
}

CpuIsaCapScope::CpuIsaCapScope(int level) : previous_(thread_cap) {
  thread_cap = level;
}

CpuIsaCapScope::~CpuIsaCapScope() {
  thread_cap = previous_;
}

}  // namespace kvscope
