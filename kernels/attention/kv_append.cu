// KV append: quantizes each new token's K and V into its slot of the paged pool. The bytes
// are exactly the CPU's (kv/kv_slot_writer.h, kv/kv_format.h): fp16 data; or per group of
// min(32, head_dim) values an fp16 scale s = fp16(min(max|x| / qmax, 65504)) and
// q = round(clamp(x / s)), int4 packed two per byte (low nibble = even element, q + 8),
// padding bytes zero. Int4 keys are offset int4: a block's slot-0 token first sets the
// block's offsets o = fp16(k), then every key stores per group of kv_k4_group_size values
// s = fp16(min((max r - min r) / 15, 65504)), m = fp16(min r) and code = round(clamp((r - m)
// / s, 0, 15)) for r = k - o. The rounding steps are IEEE operations (subtraction, division,
// multiplication, fp16 round-to-nearest-even, round half away from zero) that CUDA and the
// CPU perform identically.
//
// Two kernels in stream order: the offsets of every slot-0 token of the step first, then
// the quantization, so a prompt chunk's keys may read offsets a token of the same chunk set.
#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "ops/device_math.cuh"

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

// The code (0..15) of element i of an offset-int4 key against its group's stored (s, m).
__device__ unsigned k4_code(const float* x, const std::uint16_t* offsets,
                            const std::uint16_t* scales, int i, int group) {
  const int g = i / group;
  const float s = half_bits_to_float(scales[2 * g]);
  const float m = half_bits_to_float(scales[2 * g + 1]);
  const float inv = s > 0.0f ? 1.0f / s : 0.0f;
  const float r = x[i] - half_bits_to_float(offsets[i]);
  return static_cast<unsigned>(roundf(fminf(fmaxf((r - m) * inv, 0.0f), 15.0f)));  // NaN -> 0
}

// One warp quantizes the key x[head_dim] against its block's offsets (kv_k4_quantize). Groups
// need not line up with 32 lanes or with bytes (head_dim 10: groups of 5), so a lane first
// finds one group's range and writes its (s, m), then a lane packs each data byte.
__device__ void quantize_k4_vector(const float* x, const std::uint16_t* offsets, int hd, int group,
                                   std::uint8_t* data, std::uint16_t* scales,
                                   std::int64_t data_bytes) {
  const int lane = threadIdx.x % kWarp;
  const int n_groups = (hd + group - 1) / group;
  for (int g = lane; g < n_groups; g += kWarp) {
    float lo = __int_as_float(0x7f800000), hi = -lo;  // +-inf; NaN compares false: skipped
    for (int i = g * group; i < min(hd, (g + 1) * group); ++i) {
      const float r = x[i] - half_bits_to_float(offsets[i]);
      if (r < lo) lo = r;
      if (r > hi) hi = r;
    }
    if (lo > hi) lo = hi = 0.0f;  // no residual that is a number
    scales[2 * g] = float_to_half_bits(fminf((hi - lo) / 15.0f, kMaxFp16));
    scales[2 * g + 1] = float_to_half_bits(fmaxf(fminf(lo, kMaxFp16), -kMaxFp16));
  }
  __syncwarp();  // every (s, m) written above is visible to the whole warp
  for (std::int64_t b = lane; b < data_bytes; b += kWarp) {
    const int i = static_cast<int>(2 * b);
    unsigned byte = 0;
    if (i < hd) byte = k4_code(x, offsets, scales, i, group);
    if (i + 1 < hd) byte |= k4_code(x, offsets, scales, i + 1, group) << 4;
    data[b] = static_cast<std::uint8_t>(byte);
  }
}

// Where token t's vector of a KV head lives: its block's base and its index in a section.
struct SlotRef {
  std::uint8_t* base;
  std::int64_t vec;  // head * block_size + slot
  int slot;
};

__device__ SlotRef slot_of(const KvLayerLayout& L, const KvStepTables& tab, int t, int head) {
  const int pos = tab.pos[t];
  const int block = tab.blocks[tab.table_start[t] + pos / L.block_size];
  const int slot = pos % L.block_size;
  return {tab.pool + static_cast<std::int64_t>(block) * L.block_bytes,
          static_cast<std::int64_t>(head) * L.block_size + slot, slot};
}

// grid: (n_tokens, n_kv_heads), one warp: a slot-0 token sets its block's K offsets for the
// head, o = fp16(k). Runs before kv_append_kernel, which reads them.
__global__ void k4_offsets_kernel(KvLayerLayout L, KvStepTables tab, const float* k) {
  const int t = blockIdx.x, head = blockIdx.y;
  const SlotRef r = slot_of(L, tab, t, head);
  if (r.slot != 0) return;
  const float* x = k + (static_cast<std::int64_t>(t) * L.n_kv_heads + head) * L.head_dim;
  auto* offsets = reinterpret_cast<std::uint16_t*>(
      r.base + L.k_offsets + static_cast<std::int64_t>(head) * L.head_dim * 2);
  for (int i = threadIdx.x; i < L.head_dim; i += blockDim.x) offsets[i] = float_to_half_bits(x[i]);
}

// The warp's vector as stored, read back element by element as attention reads it, against
// the exact x: (x - stored)^2 and x^2 summed in double (differences in double, as
// kv_quant_sq_error / kv_k4_sq_error take them), added to the side's two sums.
__device__ void add_error(const KvLayerLayout& L, bool is_v, const float* x,
                          const std::uint8_t* data, const std::uint16_t* scales,
                          const std::uint16_t* offsets, KvErrorSums* errors) {
  const int lane = threadIdx.x % kWarp;
  double err = 0.0, exact = 0.0;
  for (int i = lane; i < L.head_dim; i += kWarp) {
    const double xi = x[i];
    const double d = xi - (is_v ? kv_element(L.v_dtype, data, scales, i, L.v_group)
                                : kv_key_element(L.k_dtype, data, scales, offsets, i, L.k_group));
    err += d * d;
    exact += xi * xi;
  }
  err = warp_sum(err);
  exact = warp_sum(exact);
  if (lane == 0) {
    atomicAdd(is_v ? &errors->v_sq_error : &errors->k_sq_error, err);
    atomicAdd(is_v ? &errors->v_sq_exact : &errors->k_sq_exact, exact);
  }
}

// The warp's vector x, in fp16, into the exact-tail copy of token t's block when it has one
// (kv/exact_tail.h; the CPU's write_token writes the copy with kv_write_slot as well).
__device__ void write_exact_copy(const KvStepTables& tab, int t, int head, bool is_v,
                                 const float* x) {
  const KvTailTables& tail = tab.tail;
  if (tail.shadows == nullptr) return;
  const KvLayerLayout& S = tail.layout;
  const int pos = tab.pos[t];
  const int shadow = tail.shadows[tab.table_start[t] + pos / S.block_size];
  if (shadow < 0) return;
  const std::int64_t vec = static_cast<std::int64_t>(head) * S.block_size + pos % S.block_size;
  const std::int64_t stride = is_v ? S.v_stride : S.k_stride;
  std::uint8_t* data = tail.pool + static_cast<std::int64_t>(shadow) * S.block_bytes +
                       (is_v ? S.v_data : S.k_data) + vec * stride;
  quantize_vector(KvDtype::F16, x, S.head_dim, data, nullptr, stride);
}

// grid: (n_tokens, n_kv_heads); warp 0 writes K, warp 1 writes V (and their exact-tail
// copy), each then measures its vector's error when `errors` is set.
__global__ void kv_append_kernel(KvLayerLayout L, KvStepTables tab, const float* k, const float* v,
                                 KvErrorSums* errors) {
  const int t = blockIdx.x, head = blockIdx.y;
  const bool is_v = threadIdx.x >= kWarp;
  const SlotRef r = slot_of(L, tab, t, head);
  const float* x =
      (is_v ? v : k) + (static_cast<std::int64_t>(t) * L.n_kv_heads + head) * L.head_dim;
  const KvDtype dtype = is_v ? L.v_dtype : L.k_dtype;
  const std::int64_t stride = is_v ? L.v_stride : L.k_stride;
  const int n_scales = is_v ? L.v_n_scales : L.k_n_scales;
  std::uint8_t* data = r.base + (is_v ? L.v_data : L.k_data) + r.vec * stride;
  auto* scales = reinterpret_cast<std::uint16_t*>(r.base + (is_v ? L.v_scales : L.k_scales) +
                                                  r.vec * 2 * n_scales);
  const auto* offsets = reinterpret_cast<const std::uint16_t*>(
      r.base + L.k_offsets + static_cast<std::int64_t>(head) * L.head_dim * 2);
  if (!is_v && dtype == KvDtype::Int4) {
    quantize_k4_vector(x, offsets, L.head_dim, L.k_group, data, scales, stride);
  } else {
    quantize_vector(dtype, x, L.head_dim, data, scales, stride);
  }
  write_exact_copy(tab, t, head, is_v, x);
  if (errors == nullptr) return;  // uniform over the CTA
  __syncwarp();  // the vector's bytes, written by every lane, are visible to the whole warp
  add_error(L, is_v, x, data, scales, offsets, errors);
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
  L.k_offsets = layout.k_offsets_offset(layer_in_group, 0);
  L.k_group = static_cast<int>(kv_group_size(KvSide::K, layout.k_dtype, layout.head_dim));
  L.v_group = static_cast<int>(kv_group_size(KvSide::V, layout.v_dtype, layout.head_dim));
  return L;
}

void launch_kv_append(const KvLayerLayout& layout, const KvStepTables& tables, const float* k,
                      const float* v, int n_tokens, cudaStream_t stream, KvErrorSums* errors) {
  if (n_tokens <= 0) return;
  const dim3 grid(static_cast<unsigned>(n_tokens), static_cast<unsigned>(layout.n_kv_heads));
  if (layout.k_dtype == KvDtype::Int4) {
    launch_kernel(k4_offsets_kernel, grid, kWarp, 0, stream, layout, tables, k);
    KVSCOPE_CUDA_CHECK_LAUNCH();
  }
  launch_kernel(kv_append_kernel, grid, 2 * kWarp, 0, stream, layout, tables, k, v, errors);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
