#include "run/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.h"

namespace kvscope {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNegInf = -kInf;

// The order every filter sorts by: higher logit first, lower id first on ties, so that the
// kept set and the draw never depend on how std::sort or nth_element order equal keys.
// Comparators call it from lambdas, which the sort inlines (a function pointer it did not).
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
  const std::span<const float> scores = penalized(checked(logits), recent_tokens);
  if (params_.temperature == 0.0f) return argmax(scores);
  if (selects_top_k_alone()) {
    select_top_k(scores);
  } else {
    gather(scores);
    drop_masked();
    top_k();
  }
  top_p();
  min_p();
  return draw();
}

// NaN and +inf both fail `v < inf`; an int flag and no early exit let the pass vectorize,
// and the offending token is looked for only when there is one.
std::span<const float> Sampler::checked(std::span<const float> logits) {
  if (logits.empty()) throw_error<UsageError>("sampler: empty vocabulary (0 logits)");
  if (logits.size() > static_cast<std::size_t>(std::numeric_limits<TokenId>::max())) {
    throw_error<UsageError>("sampler: {} logits exceed the token id range", logits.size());
  }
  int invalid = 0;
  for (const float v : logits) invalid |= !(v < kInf);
  if (invalid == 0) return logits;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    if (!(logits[i] < kInf)) {
      throw_error<UsageError>(
          "sampler: logit of token {} is {} (the forward pass produced an "
          "invalid value)",
          i, logits[i]);
    }
  }
  return logits;
}

bool Sampler::penalizes() const {
  if (params_.repeat_last_n == 0) return false;
  return params_.repeat_penalty != 1.0f || params_.frequency_penalty != 0.0f ||
         params_.presence_penalty != 0.0f;
}

// llama.cpp's penalties: each distinct token among the last repeat_last_n, seen c times, has
// its logit divided by repeat_penalty when positive and multiplied when not (so it always
// becomes less likely), then c * frequency_penalty + presence_penalty taken off. Without a
// penalty the logits are used as they are, not copied.
std::span<const float> Sampler::penalized(std::span<const float> logits,
                                          std::span<const TokenId> recent_tokens) {
  if (!penalizes()) return logits;
  std::size_t n = recent_tokens.size();
  if (params_.repeat_last_n > 0) n = std::min(n, static_cast<std::size_t>(params_.repeat_last_n));
  const auto window = recent_tokens.last(n);
  penalized_.assign(window.begin(), window.end());
  std::sort(penalized_.begin(), penalized_.end());
  scores_.assign(logits.begin(), logits.end());
  for (std::size_t i = 0; i < penalized_.size();) {
    const TokenId id = penalized_[i];
    std::size_t count = 1;
    while (i + count < penalized_.size() && penalized_[i + count] == id) ++count;
    i += count;
    if (id < 0 || static_cast<std::size_t>(id) >= scores_.size()) {
      throw_error<UsageError>("sampler: recent token {} is outside the vocabulary (size {})", id,
                              scores_.size());
    }
    float& logit = scores_[static_cast<std::size_t>(id)];
    if (params_.repeat_penalty != 1.0f) {
      logit = logit <= 0.0f ? logit * params_.repeat_penalty : logit / params_.repeat_penalty;
    }
    logit -= static_cast<float>(count) * params_.frequency_penalty + params_.presence_penalty;
  }
  return scores_;
}

// The first maximum: the lowest id on ties.
TokenId Sampler::argmax(std::span<const float> scores) {
  const auto best = std::max_element(scores.begin(), scores.end());
  if (*best == kNegInf) {
    throw_error<UsageError>("sampler: no token can be sampled: all {} logits are -inf",
                            scores.size());
  }
  return static_cast<TokenId>(best - scores.begin());
}

// top_p sorts what top_k keeps, so then only which k are kept matters, not the order
// nth_element leaves them in (which draw() sees when top_p is off).
bool Sampler::selects_top_k_alone() const {
  return params_.top_k > 0 && params_.top_p < 1.0f;
}

// The k best by ranks_before (every unmasked one when fewer), the set top_k() keeps, in one
// pass over the logits instead of copying the vocabulary and partitioning it: a heap of the
// best so far with the worst kept on top. Ids come in increasing order, so a later token
// whose logit equals the worst kept one ranks after it: only a higher logit gets in.
void Sampler::select_top_k(std::span<const float> scores) {
  const auto k = static_cast<std::size_t>(params_.top_k);
  const auto worst_on_top = [](const Candidate& a, const Candidate& b) {
    return ranks_before(a, b);
  };
  candidates_.clear();
  std::size_t i = 0;
  for (; i < scores.size() && candidates_.size() < k; ++i) {
    if (scores[i] == kNegInf) continue;
    candidates_.push_back({static_cast<TokenId>(i), scores[i]});
    std::push_heap(candidates_.begin(), candidates_.end(), worst_on_top);
  }
  if (candidates_.empty()) {
    throw_error<UsageError>("sampler: no token can be sampled: all {} logits are -inf",
                            scores.size());
  }
  float worst = candidates_.front().logit;
  const auto offer = [&](std::size_t id) {
    if (!(scores[id] > worst)) return;  // -inf included: a kept logit is finite
    std::pop_heap(candidates_.begin(), candidates_.end(), worst_on_top);
    candidates_.back() = {static_cast<TokenId>(id), scores[id]};
    std::push_heap(candidates_.begin(), candidates_.end(), worst_on_top);
    worst = candidates_.front().logit;
  };
  // Once the heap holds good logits few blocks have one above the worst: test 16 at a time
  // (a vectorized compare) and look at each only in blocks that do.
  constexpr std::size_t kBlock = 16;
  for (; i + kBlock <= scores.size(); i += kBlock) {
    int above = 0;
    for (std::size_t j = 0; j < kBlock; ++j) above |= scores[i + j] > worst;
    if (above == 0) continue;
    for (std::size_t j = 0; j < kBlock; ++j) offer(i + j);
  }
  for (; i < scores.size(); ++i) offer(i);
}

// Every token a candidate, in id order, for the filters below.
void Sampler::gather(std::span<const float> scores) {
  candidates_.resize(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i) {
    candidates_[i] = {static_cast<TokenId>(i), scores[i]};
  }
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
                   candidates_.end(),
                   [](const Candidate& a, const Candidate& b) { return ranks_before(a, b); });
  candidates_.resize(k);
}

// Keeps the highest-ranked tokens until their probability (at temperature 1) reaches top_p;
// always at least one.
void Sampler::top_p() {
  if (params_.top_p >= 1.0f) return;
  std::sort(candidates_.begin(), candidates_.end(),
            [](const Candidate& a, const Candidate& b) { return ranks_before(a, b); });
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
