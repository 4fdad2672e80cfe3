#include "cli/sampling_args.h"

#include <cstdio>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kvscope::cli {

void declare_sampling_options(ArgParser& p) {
  const SamplingParams d;
  p.option({"--temp"}, fmt::format("temperature, 0 = greedy (default {})", d.temperature));
  p.option({"--top-k"}, fmt::format("top-k, 0 = off (default {})", d.top_k));
  p.option({"--top-p"}, fmt::format("top-p, 1 = off (default {})", d.top_p));
  p.option({"--min-p"}, fmt::format("min-p, 0 = off (default {})", d.min_p));
  p.option({"--repeat-penalty"}, fmt::format("repetition penalty, 1 = off (default {}, over the "
                                             "last {} tokens)",
                                             d.repeat_penalty, d.repeat_last_n));
  p.option({"--seed"}, "sampling seed (default 0)");
  p.note(
      "Sampling flags not given take the model's own values where its Hugging Face folder's\n"
      "generation_config.json has them (do_sample false: greedy; its repetition_penalty looks\n"
      "at the whole text), else the defaults above.");
}

SamplingParams sampling_options(const ArgParser& p, const Engine& engine) {
  SamplingParams s = engine.default_sampling();
  s.temperature = static_cast<float>(p.get_double("--temp", s.temperature, 0.0, 100.0));
  s.top_k = static_cast<int>(p.get_int("--top-k", s.top_k, 0, std::numeric_limits<int>::max()));
  s.top_p = static_cast<float>(p.get_double("--top-p", s.top_p, 0.0, 1.0));
  s.min_p = static_cast<float>(p.get_double("--min-p", s.min_p, 0.0, 1.0));
  if (p.has("--repeat-penalty")) {
    s.repeat_penalty = static_cast<float>(p.get_double("--repeat-penalty", 1.0, 0.01, 100.0));
    s.repeat_last_n = SamplingParams{}.repeat_last_n;
  }
  s.seed = static_cast<std::uint64_t>(
      p.get_int("--seed", 0, 0, std::numeric_limits<std::int64_t>::max()));
  return s;
}

void print_sampling_notes(const Engine& engine) {
  const SamplingDefaults& d = engine.model().sampling_defaults();
  for (const auto& note : d.notes) fmt::print(stderr, "note: {}\n", note);
  if (!d.any()) return;
  std::vector<std::string> given;
  if (d.do_sample) given.push_back(fmt::format("do_sample {}", *d.do_sample));
  if (d.temperature) given.push_back(fmt::format("temperature {}", *d.temperature));
  if (d.top_k) given.push_back(fmt::format("top_k {}", *d.top_k));
  if (d.top_p) given.push_back(fmt::format("top_p {}", *d.top_p));
  if (d.min_p) given.push_back(fmt::format("min_p {}", *d.min_p));
  if (d.repetition_penalty) {
    given.push_back(fmt::format("repetition_penalty {}", *d.repetition_penalty));
  }
  fmt::print(stderr, "note: sampling defaults from {}: {}\n", d.source, fmt::join(given, ", "));
}

}  // namespace kvscope::cli
