#include "cpu/quant_dot/q8_activations.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "quant/quant_blocks.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {

namespace {

void quantize_block(const float* x, Q8Block& b) {
  float amax = 0.0f;
  bool finite = true;
  for (int i = 0; i < kQ8BlockValues; ++i) {
    finite = finite && std::isfinite(x[i]);
    amax = std::max(amax, std::fabs(x[i]));
  }
  if (!finite) {
    b = Q8Block{};
    b.d = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  int sum = 0;
  for (int i = 0; i < kQ8BlockValues; ++i) {
    const int q = quants::nearest_int(x[i] * id);
    b.q[i] = static_cast<std::int8_t>(q);
    sum += q;
    if (i == kQ8BlockValues / 2 - 1) b.sum16 = sum;
  }
  b.d = fp16_to_float(float_to_fp16(d));
  b.s = b.d * static_cast<float>(sum);
  b.sum = sum;
}

}  // namespace

void quantize_row_q8(std::span<const float> x, std::span<Q8Block> out) {
  if (x.size() != out.size() * kQ8BlockValues) {
    throw_error<UsageError>("quantize_row_q8: {} values do not fill {} blocks of {}", x.size(),
                            out.size(), kQ8BlockValues);
  }
  for (std::size_t b = 0; b < out.size(); ++b) quantize_block(&x[b * kQ8BlockValues], out[b]);
}

}  // namespace kvscope
