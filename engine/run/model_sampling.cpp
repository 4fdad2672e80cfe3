#include "run/model_sampling.h"

#include <algorithm>
#include <climits>

namespace kvscope {

SamplingParams with_model_defaults(const SamplingDefaults& model, SamplingParams base) {
  SamplingParams p = base;
  if (model.temperature) p.temperature = static_cast<float>(*model.temperature);
  if (model.do_sample == false) p.temperature = 0.0f;
  if (model.top_k) p.top_k = static_cast<int>(std::min<std::int64_t>(*model.top_k, INT_MAX));
  if (model.top_p) p.top_p = static_cast<float>(*model.top_p);
  if (model.min_p) p.min_p = static_cast<float>(*model.min_p);
  if (model.repetition_penalty) {
    p.repeat_penalty = static_cast<float>(*model.repetition_penalty);
    p.repeat_last_n = -1;
  }
  return p;
}

}  // namespace kvscope
