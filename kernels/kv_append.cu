// KV append: quantizes each new token's K and V into its slot of the paged pool. The bytes
// are exactly kv_quantize's (kv/kv_format.h): fp16 data; or per group of min(32, head_dim)
// values an fp16 scale s = fp16(min(max|x| / qmax, 65504)) and q = round(clamp(x / s)),
// int4 packed two per byte (low nibble = even element, q + 8), padding bytes zero. The
// rounding steps are IEEE operations (division, multiplication, fp16 round-to-nearest-even,
// round half away from zero) that CUDA and the CPU perform identically.
#include "cuda_check.h"
#include "device_math.cuh"

namespace kvscope::cuda {

namespace {

constexpr float kMaxFp16 = 65504.0f;

// One warp quantizes one vector x[head_dim] into data / scales. Group g of the format is
// chunk g of 32 lanes (or the only group when head_dim < 32), so a group's max|x| is one
// warp reduction.
__device__ void quantize_vector(KvDtype dtype, const float* x, int hd, std::uint8_t* data,
                                std::uint16_t* scales, std::int64_t data_bytes) {
  const int lane = threadIdx.x % kWarp;
  if (dtype == KvDtype::F16) {
    auto* h = reinterpret_cast<std::uint16_t*>(data);
    for (int i = lane; i < hd; i += kWarp) h[i] = float_to_half_bits(x[i]);
    return;
  }
  const float qmax = dtype == KvDtype::Int8 ? 127.0f : 7.0f;
  for (int chunk = 0; chunk * kWarp < hd; ++chunk) {  // uniform over the warp
    const int i = chunk * kWarp + lane;
    const bool valid = i < hd;
    const float xv = valid ? x[i] : 0.0f;
    // NaN does not raise the scale (the CPU's `a > amax` skips it)
    const float amax = warp_max(valid && !isnan(xv) ? fabsf(xv) : 0.0f);
    const std::uint16_t s_bits = float_to_half_bits(fminf(amax / qmax, kMaxFp16));
    const float s = half_bits_to_float(s_bits);
    const float inv = s > 0.0f ? 1.0f / s : 0.0f;
    const int q = static_cast<int>(roundf(fminf(fmaxf(xv * inv, -qmax), qmax)));
    if (lane == 0) scales[chunk] = s_bits;
    if (dtype == KvDtype::Int8) {
      if (valid) data[i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(q));
    } else {
      const unsigned nibble = valid ? static_cast<unsigned>(q + 8) : 0u;
      const unsigned odd = __shfl_xor_sync(0xffffffffu, nibble, 1);
      if (valid && lane % 2 == 0) data[i >> 1] = static_cast<std::uint8_t>(nibble | (odd << 4));
    }
  }
  // padding to an even byte count (and int4's unused high nibble) is zero, as on the CPU
  const std::int64_t used = dtype == KvDtype::Int8 ? hd : (hd + 1) / 2;
  for (std::int64_t b = used + lane; b < data_bytes; b += kWarp) data[b] = 0;
}

// grid: (n_tokens, n_kv_heads); warp 0 writes K, warp 1 writes V.
__global__ void kv_append_kernel(KvLayerLayout L, KvStepTables tab, const float* k,
                                 const float* v) {
  const int t = blockIdx.x, head = blockIdx.y;
  const bool is_v = threadIdx.x >= kWarp;
  const int pos = tab.pos[t];
  const int block = tab.blocks[tab.table_start[t] + pos / L.block_size];
  const std::int64_t vec = static_cast<std::int64_t>(head) * L.block_size + pos % L.block_size;
  std::uint8_t* base = tab.pool + static_cast<std::int64_t>(block) * L.block_bytes;
  const float* x =
      (is_v ? v : k) + (static_cast<std::int64_t>(t) * L.n_kv_heads + head) * L.head_dim;
  const KvDtype dtype = is_v ? L.v_dtype : L.k_dtype;
  const std::int64_t stride = is_v ? L.v_stride : L.k_stride;
  const int n_scales = is_v ? L.v_n_scales : L.k_n_scales;
  std::uint8_t* data = base + (is_v ? L.v_data : L.k_data) + vec * stride;
  auto* scales = reinterpret_cast<std::uint16_t*>(base + (is_v ? L.v_scales : L.k_scales) +
                                                  vec * 2 * n_scales);
  quantize_vector(dtype, x, L.head_dim, data, scales, stride);
}

}  // namespace

KvLayerLayout kv_layer_layout(const KvBlockLayout& layout, std::int64_t layer_in_group) {
  KvLayerLayout L;
  L.k_dtype = layout.k_dtype;
  L.v_dtype = layout.v_dtype;
  L.head_dim = static_cast<int>(layout.head_dim);
  L.block_size = static_cast<int>(layout.block_size);
  L.n_kv_heads = static_cast<int>(layout.n_kv_heads);
  L.block_bytes = layout.block_bytes();
  L.k_data = layout.data_offset(KvSide::K, layer_in_group, 0, 0);
  L.v_data = layout.data_offset(KvSide::V, layer_in_group, 0, 0);
  L.k_scales = layout.scales_offset(KvSide::K, layer_in_group, 0, 0);
  L.v_scales = layout.scales_offset(KvSide::V, layer_in_group, 0, 0);
  L.k_stride = layout.data_stride(KvSide::K);
  L.v_stride = layout.data_stride(KvSide::V);
  L.k_n_scales = static_cast<int>(layout.scales_per_vector(KvSide::K));
  L.v_n_scales = static_cast<int>(layout.scales_per_vector(KvSide::V));
  return L;
}

void launch_kv_append(const KvLayerLayout& layout, const KvStepTables& tables, const float* k,
                      const float* v, int n_tokens, cudaStream_t stream) {
  if (n_tokens <= 0) return;
  const dim3 grid(static_cast<unsigned>(n_tokens), static_cast<unsigned>(layout.n_kv_heads));
  kv_append_kernel<<<grid, 2 * kWarp, 0, stream>>>(layout, tables, k, v);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
