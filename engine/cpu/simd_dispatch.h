// Which instruction set the llama.cpp-compatible kernels (ggml_compat.h, ggml_flash_attn.h)
// run with. Each of them has a portable version and an AVX2 + FMA + F16C version that does
// the same IEEE operations (so both give the same bits); the AVX2 one is only faster.
#pragma once

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define KVSCOPE_X86_SIMD 1
// Compiles one function for AVX2 + FMA + F16C; only called after use_avx2_fma_f16c().
#define KVSCOPE_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
// Compiles one function for AVX alone (with SSE4.1); only called after use_avx().
#define KVSCOPE_TARGET_AVX __attribute__((target("avx,sse4.1")))
#else
#define KVSCOPE_X86_SIMD 0
#define KVSCOPE_TARGET_AVX2
#define KVSCOPE_TARGET_AVX
#endif

namespace kvscope {

// True when the CPU has AVX2, FMA and F16C (and the OS saves YMM registers), unless the
// calling thread is inside a PortableArithmeticScope, or a CpuIsaCapScope or KVSCOPE_CPU_ISA
// caps it.
bool use_avx2_fma_f16c();
// True when the CPU has AVX with SSSE3 and SSE4.1 (and the OS saves YMM registers), with the
// same exceptions. Only the quantized dot products have AVX-only kernels (quant_dot.h).
bool use_avx();
// The AVX level without AVX2: those CPUs have no FMA, where std::fma is a slow software
// call, so code that would fuse a multiply and an add does them in two roundings instead.
inline bool use_avx_alone() {
  return use_avx() && !use_avx2_fma_f16c();
}
// True when, beyond that, it has AVX-512 F/BW/VL with VNNI (and the OS saves the AVX-512
// state), with the same PortableArithmeticScope exception.
bool use_avx512_vnni();

// What the CPU and OS support, whatever the calling thread's scope says.
bool cpu_has_avx();
bool cpu_has_avx2_fma_f16c();
bool cpu_has_avx512_vnni();

// KVSCOPE_CPU_ISA=portable|avx|avx2|avx512-vnni caps the instruction set every kernel uses
// below what the CPU has (an AVX-only machine's kernels, timed on a newer one); unset, empty
// or unknown: no cap. The level: 0 portable, 1 AVX, 2 AVX2, 3 AVX-512 VNNI.
int cpu_isa_cap();

// Caps the instruction set of the calling thread's kernels while it lives (levels as
// cpu_isa_cap's; the lower of the two applies): tests run the AVX-only kernels on a newer CPU.
class CpuIsaCapScope {
 public:
  explicit CpuIsaCapScope(int level);
  ~CpuIsaCapScope();
  CpuIsaCapScope(const CpuIsaCapScope&) = delete;
  CpuIsaCapScope& operator=(const CpuIsaCapScope&) = delete;

 private:
  int previous_;
};

// Makes the calling thread use the portable versions while it lives: tests check with it
// that both versions give identical bits.
class PortableArithmeticScope : public CpuIsaCapScope {
 public:
  PortableArithmeticScope() : CpuIsaCapScope(0) {}
};

}  // namespace kvscope
