#include "run/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.h"

namespace kvscope {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The order every filter sorts by: higher logit first, lower id first on ties, so that the
// kept set and the draw never depend on how std::sort or nth_element order equal keys.
template <typename C>
bool ranks_before(const C& a, const C& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// A uniform double in [0, 1) from the top 53 bits of one draw (portable, unlike
// std::uniform_real_distribution).
double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace

void validate(const SamplingParams& p) {
  if (!(p.temperature >= 0.0f) || !std::isfinite(p.temperature)) {
    throw_error<UsageError>("temperature must be a number >= 0 (got {})", p.temperature);
  }
  if (p.top_k < 0) throw_error<UsageError>("top_k must be >= 0, 0 = off (got {})", p.top_k);
  if (!(p.top_p >= 0.0f && p.top_p <= 1.0f)) {
    throw_error<UsageError>("top_p must be in [0, 1], 1 = off (got {})", p.top_p);
  }
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) {
    throw_error<UsageError>("min_p must be in [0, 1], 0 = off (got {})", p.min_p);
  }
  if (!(p.repeat_penalty > 0.0f) || !std::isfinite(p.repeat_penalty)) {
    throw_error<UsageError>("repeat_penalty must be > 0, 1 = off (got {})", p.repeat_penalty);
  }
  if (p.repeat_last_n < -1) {
    throw_error<UsageError>("repeat_last_n must be >= -1, -1 = all (got {})", p.repeat_last_n);
  }
  if (!(p.frequency_penalty >= -2.0f && p.frequency_penalty <= 2.0f)) {
    throw_error<UsageError>("frequency_penalty must be in [-2, 2], 0 = off (got {})",
                            p.frequency_penalty);
  }
  if (!(p.presence_penalty >= -2.0f && p.presence_penalty <= 2.0f)) {
    throw_error<UsageError>("presence_penalty must be in [-2, 2], 0 = off (got {})",
                            p.presence_penalty);
  }
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {
  validate(params_);
}

TokenId Sampler::sample(std::span<const float> logits, std::span<const TokenId> recent_tokens) {
  load(logits);
  apply_penalties(recent_tokens);
  if (params_.temperature == 0.0f) return argmax();
  drop_masked();
  top_k();
  top_p();
  min_p();
  return draw();
}

void Sampler::load(std::span<const float> logits) {
  if (logits.empty()) throw_error<UsageError>("sampler: empty vocabulary (0 logits)");
  if (logits.size() > static_cast<std::size_t>(std::numeric_limits<TokenId>::max())) {
    throw_error<UsageError>("sampler: {} logits exceed the token id range", logits.size());
  }
  candidates_.resize(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float v = logits[i];
    if (std::isnan(v) || v == std::numeric_limits<float>::infinity()) {
      throw_error<UsageError>(
          "sampler: logit of token {} is {} (the forward pass produced an "
          "invalid value)",
          i, v);
    }
    candidates_[i] = {static_cast<TokenId>(i), v};
  }
}

bool Sampler::penalizes() const {
  if (params_.repeat_last_n == 0) return false;
  return params_.repeat_penalty != 1.0f || params_.frequency_penalty != 0.0f ||
         params_.presence_penalty != 0.0f;
}

// llama.cpp's penalties: each distinct token among the last repeat_last_n, seen c times, has
// its logit divided by repeat_penalty when positive and multiplied when not (so it always
// becomes less likely), then c * frequency_penalty + presence_penalty taken off.
void Sampler::apply_penalties(std::span<const TokenId> recent_tokens) {
  if (!penalizes()) return;
  std::size_t n = recent_tokens.size();
  if (params_.repeat_last_n > 0) n = std::min(n, static_cast<std::size_t>(params_.repeat_last_n));
  const auto window = recent_tokens.last(n);
  penalized_.assign(window.begin(), window.end());
  std::sort(penalized_.begin(), penalized_.end());
  for (std::size_t i = 0; i < penalized_.size();) {
    const TokenId id = penalized_[i];
    std::size_t count = 1;
    while (i + count < penalized_.size() && penalized_[i + count] == id) ++count;
    i += count;
    if (id < 0 || static_cast<std::size_t>(id) >= candidates_.size()) {
      throw_error<UsageError>("sampler: recent token {} is outside the vocabulary (size {})", id,
                              candidates_.size());
    }
    float& logit = candidates_[static_cast<std::size_t>(id)].logit;
    if (params_.repeat_penalty != 1.0f) {
      logit = logit <= 0.0f ? logit * params_.repeat_penalty : logit / params_.repeat_penalty;
    }
    logit -= static_cast<float>(count) * params_.frequency_penalty + params_.presence_penalty;
  }
}

TokenId Sampler::argmax() const {
  // candidates_ is in id order here, so the first maximum is the lowest id.
  const auto best =
      std::max_element(candidates_.begin(), candidates_.end(),
                       [](const Candidate& a, const Candidate& b) { return a.logit < b.logit; });
  if (best->logit == kNegInf) {
    throw_error<UsageError>("sampler: no token can be sampled: all {} logits are -inf",
                            candidates_.size());
  }
  return best->id;
}

void Sampler::drop_masked() {
  const std::size_t vocab = candidates_.size();
  std::erase_if(candidates_, [](const Candidate& c) { return c.logit == kNegInf; });
  if (candidates_.empty()) {
    throw_error<UsageError>("sampler: no token can be sampled: all {} logits are -inf", vocab);
  }
}

void Sampler::top_k() {
  const auto k = static_cast<std::size_t>(params_.top_k);
  if (k == 0 || k >= candidates_.size()) return;
  std::nth_element(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(k - 1),
                   candidates_.end(), ranks_before<Candidate>);
  candidates_.resize(k);
}

// Keeps the highest-ranked tokens until their probability (at temperature 1) reaches top_p;
// always at least one.
void Sampler::top_p() {
  if (params_.top_p >= 1.0f) return;
  std::sort(candidates_.begin(), candidates_.end(), ranks_before<Candidate>);
  const float max = candidates_.front().logit;
  double total = 0.0;
  probs_.resize(candidates_.size());
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    probs_[i] = std::exp(static_cast<double>(candidates_[i].logit - max));
    total += probs_[i];
  }
  const double target = static_cast<double>(params_.top_p) * total;
  double cumulative = 0.0;
  std::size_t keep = candidates_.size();
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    cumulative += probs_[i];
    if (cumulative >= target) {
      keep = i + 1;
      break;
    }
  }
  candidates_.resize(keep);
}

// Drops tokens whose probability is below min_p times the top one's: logit < max + ln(min_p).
void Sampler::min_p() {
  if (params_.min_p <= 0.0f) return;
  float max = kNegInf;
  for (const Candidate& c : candidates_) max = std::max(max, c.logit);
  const float threshold = max + std::log(params_.min_p);
  std::erase_if(candidates_, [threshold](const Candidate& c) { return c.logit < threshold; });
}

// Draws from softmax(logit / temperature) over the survivors. Dividing the difference to
// the max (not each logit) keeps a tiny temperature from overflowing to inf - inf.
TokenId Sampler::draw() {
  float max = kNegInf;
  for (const Candidate& c : candidates_) max = std::max(max, c.logit);
  const auto temperature = static_cast<double>(params_.temperature);
  probs_.resize(candidates_.size());
  double total = 0.0;
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    probs_[i] = std::exp(static_cast<double>(candidates_[i].logit - max) / temperature);
    total += probs_[i];
  }
  const double target = uniform01(rng_) * total;
  double cumulative = 0.0;
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    cumulative += probs_[i];
    if (target < cumulative) return candidates_[i].id;
  }
  return candidates_.back().id;  // rounding left target at the very top
}

}  // namespace kvscope
