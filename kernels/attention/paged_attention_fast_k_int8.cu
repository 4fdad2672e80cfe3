// The fast paged attention kernels for int8 keys (every V dtype, head tile and head_dim),
// one K dtype per file so the instantiations compile in parallel.
#include "attention/paged_attention_fast.cuh"

namespace kvscope::cuda {

void launch_fast_attention_int8_keys(const AttentionArgs& a, const FastAttentionLaunch& f,
                                     const float* q, float* partial, float* out,
                                     cudaStream_t stream) {
  launch_fast_attention_for_k<KvDtype::Int8>(a, f, q, partial, out, stream);
}

}  // namespace kvscope::cuda
