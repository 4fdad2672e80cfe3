// The fast paged attention kernels for f16 keys (every V dtype, head tile and head_dim),
// one K dtype per file so the instantiations compile in parallel.
#include "attention/paged_attention_fast.cuh"

namespace kvscope::cuda {

void launch_fast_attention_f16_keys(const AttentionArgs& a, const FastAttentionLaunch& f,
                                    const float* q, float* partial, float* out,
                                    cudaStream_t stream) {
  launch_fast_attention_for_k<KvDtype::F16>(a, f, q, partial, out, stream);
}

}  // namespace kvscope::cuda
