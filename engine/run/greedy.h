// Greedy decoding without the logits: the pick Sampler makes at temperature 0 when no
// repetition penalty applies (the highest logit, the lowest id on ties), made where the
// logits are. A GPU backend makes it on the device and copies one id per row instead of
// [vocab] floats (Backend::forward_greedy); the CPU makes it with greedy_pick below.
#pragma once

#include <span>
#include <string>

#include "text/tokenizer.h"

namespace kvscope {

// What a pick is when a row has no token to give; both are errors the sampler reports too.
inline constexpr TokenId kPickInvalidLogit = -1;  // a NaN or +inf logit: a broken forward pass
inline constexpr TokenId kPickAllMasked = -2;     // every logit is -inf

// The id of the highest logit of one row (lowest id on ties), or one of the codes above.
// An empty row is kPickAllMasked.
TokenId greedy_pick(std::span<const float> logits);

// The message for a negative pick, worded as Sampler's own errors (the row's length is not
// known where only the pick came back, so it is not quoted).
std::string greedy_pick_error(TokenId code);

}  // namespace kvscope
