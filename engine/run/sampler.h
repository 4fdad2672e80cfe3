// Picks the next token from a step's logits. The chain and its order are llama.cpp's
// default: penalties (repetition, then frequency and presence), top-k, top-p, min-p,
// temperature, then a draw from the softmax of what is left. top-p and min-p therefore see the
// temperature-1 distribution. Temperature 0 is greedy: the highest logit after the penalty, the
// lowest id on ties. Draws come from a std::mt19937_64 seeded with `seed` and turned into doubles
// by this file (not std::uniform_real_distribution, whose output differs between standard
// libraries), so a seed reproduces the same tokens on every platform.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "text/tokenizer.h"

namespace kvscope {

struct SamplingParams {
  float temperature = 0.8f;     // 0 => greedy
  int top_k = 40;               // keep the k highest logits; 0 = off
  float top_p = 0.95f;          // keep the smallest set whose probability reaches p; 1 = off
  float min_p = 0.05f;          // drop tokens below min_p * the top probability; 0 = off
  float repeat_penalty = 1.0f;  // > 1 discourages recent tokens; 1 = off
  int repeat_last_n = 64;       // how many recent tokens the penalties look at; -1 = all given
  // OpenAI's penalties over the same window, as llama.cpp applies them: a token seen c times
  // loses c * frequency_penalty + presence_penalty from its logit. 0 = off; [-2, 2].
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  std::uint64_t seed = 0;
};

// Throws UsageError naming the field when a value is out of range (temperature < 0 or NaN,
// top_k < 0, top_p or min_p outside [0, 1], repeat_penalty <= 0, repeat_last_n < -1,
// frequency_penalty or presence_penalty outside [-2, 2]).
void validate(const SamplingParams& params);

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  const SamplingParams& params() const { return params_; }
  // Temperature 0 without a penalty: sample() is then greedy_pick (greedy.h) of the logits
  // alone, and a backend may make that pick itself.
  bool picks_greedily() const { return params_.temperature == 0.0f && !penalizes(); }

  // logits: [vocab]; recent_tokens: the sequence so far (oldest first), used by the
  // repetition penalty. Throws UsageError for an empty vocab, a NaN or +inf logit (a broken
  // forward pass: naming the token), a recent token outside the vocab, or when every logit
  // is -inf. -inf logits (masked tokens) are never sampled.
  TokenId sample(std::span<const float> logits, std::span<const TokenId> recent_tokens);

 private:
  struct Candidate {
    TokenId id;
    float logit;
  };

  static std::span<const float> checked(std::span<const float> logits);
  bool penalizes() const;
  std::span<const float> penalized(std::span<const float> logits,
                                   std::span<const TokenId> recent_tokens);
  static TokenId argmax(std::span<const float> scores);
  bool selects_top_k_alone() const;
  void select_top_k(std::span<const float> scores);
  void gather(std::span<const float> scores);
  void drop_masked();
  void top_k();
  void top_p();
  void min_p();
  TokenId draw();

  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<Candidate> candidates_;  // [vocab] or the top k at first, then what survives
  std::vector<float> scores_;          // scratch: [vocab], the logits after the penalties
  std::vector<TokenId> penalized_;     // scratch: the window's tokens, sorted
  std::vector<double> probs_;          // scratch: [candidates]
};

}  // namespace kvscope
