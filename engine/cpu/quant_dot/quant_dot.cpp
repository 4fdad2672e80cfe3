#include "cpu/quant_dot/quant_dot.h"

#include "cpu/simd_dispatch.h"

namespace kvscope {

using quant_dot_detail::KernelTable;

ActivationKind activation_kind(TensorType type) {
  switch (type) {
    case TensorType::F16:
      return ActivationKind::F16;
    case TensorType::BF16:
      return ActivationKind::BF16;
    case TensorType::Q4_0:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::Q8_0:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K:
      return ActivationKind::Q8;
    default:
      return ActivationKind::F32;
  }
}

std::string_view cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx:
      return "AVX";
    case CpuIsa::Avx2:
      return "AVX2";
    case CpuIsa::Avx512Vnni:
      return "AVX-512 VNNI";
    case CpuIsa::Portable:
      break;
  }
  return "portable";
}

bool cpu_supports(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx:
      return quant_dot_detail::avx_kernels() && cpu_has_avx();
    case CpuIsa::Avx2:
      return quant_dot_detail::avx2_kernels() && cpu_has_avx2_fma_f16c();
    case CpuIsa::Avx512Vnni:
      return quant_dot_detail::avx512vnni_kernels() && cpu_has_avx512_vnni();
    case CpuIsa::Portable:
      break;
  }
  return true;
}

CpuIsa best_cpu_isa() {
  if (use_avx512_vnni() && cpu_supports(CpuIsa::Avx512Vnni)) return CpuIsa::Avx512Vnni;
  if (use_avx2_fma_f16c() && cpu_supports(CpuIsa::Avx2)) return CpuIsa::Avx2;
  if (use_avx() && cpu_supports(CpuIsa::Avx)) return CpuIsa::Avx;
  return CpuIsa::Portable;
}

const KernelTable* quant_dot_detail::kernel_table(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx:
      return avx_kernels();
    case CpuIsa::Avx2:
      return avx2_kernels();
    case CpuIsa::Avx512Vnni:
      return avx512vnni_kernels();
    case CpuIsa::Portable:
      break;
  }
  return &portable_kernels();
}

TileDotFn tile_dot_fn(TensorType type, CpuIsa isa) {
  const KernelTable* table = quant_dot_detail::kernel_table(isa);
  if (table == nullptr) return nullptr;
  switch (type) {
    case TensorType::Q4_0:
      return table->q4_0;
    case TensorType::Q4_1:
      return table->q4_1;
    case TensorType::Q5_0:
      return table->q5_0;
    case TensorType::Q5_1:
      return table->q5_1;
    case TensorType::Q8_0:
      return table->q8_0;
    case TensorType::Q4_K:
      return table->q4_K;
    case TensorType::Q5_K:
      return table->q5_K;
    case TensorType::Q6_K:
      return table->q6_K;
    case TensorType::F16:
      return table->f16;
    case TensorType::BF16:
      return table->bf16;
    default:
      return nullptr;
  }
}

}  // namespace kvscope
