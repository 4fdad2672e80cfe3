#include "run/greedy.h"

#include <cmath>
#include <limits>

namespace kvscope {

TokenId greedy_pick(std::span<const float> logits) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  TokenId best = kPickAllMasked;
  float best_logit = -kInf;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float v = logits[i];
    if (std::isnan(v) || v == kInf) return kPickInvalidLogit;
    if (v > best_logit) best_logit = v, best = static_cast<TokenId>(i);  // strict: lowest id
  }
  return best;
}

std::string greedy_pick_error(TokenId code) {
  if (code == kPickInvalidLogit) {
    return "sampler: a logit is nan or +inf (the forward pass produced an invalid value)";
  }
  return "sampler: no token can be sampled: every logit is -inf";
}

}  // namespace kvscope
