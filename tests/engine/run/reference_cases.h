// llama.cpp's greedy reference runs in ../shared/reference/*-greedy.json: per prompt, its
// ids, the greedy ids, and at each step the chosen id and the top-5 (id, log-probability).
#pragma once

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/engine.h"
#include "run/request.h"

namespace kvscope::test {

struct ReferenceStep {
  TokenId id = -1;
  std::vector<std::pair<TokenId, double>> top;  // [5], best first
  // How far llama.cpp's best token was ahead of its second, in nats.
  double margin() const { return top[0].second - top[1].second; }
};

struct ReferenceCase {
  std::string prompt;
  std::vector<TokenId> prompt_ids;
  std::vector<TokenId> greedy_ids;
  std::vector<ReferenceStep> steps;
};

// The CPU backend on 2 threads at `context` tokens: how the reference tests run a model.
inline EngineOptions reference_cpu_options(std::int64_t context) {
  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  o.n_threads = 2;
  o.context_length = context;
  return o;
}

inline std::vector<ReferenceCase> load_reference_cases(const std::string& path) {
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  std::vector<ReferenceCase> cases;
  for (const auto& c : j.at("cases")) {
    ReferenceCase k;
    k.prompt = c.at("prompt").get<std::string>();
    k.prompt_ids = c.at("prompt_ids").get<std::vector<TokenId>>();
    k.greedy_ids = c.at("greedy_ids").get<std::vector<TokenId>>();
    for (const auto& s : c.at("steps")) {
      ReferenceStep step;
      step.id = s.at("id").get<TokenId>();
      for (const auto& t : s.at("top")) step.top.emplace_back(t.at(0), t.at(1));
      k.steps.push_back(std::move(step));
    }
    cases.push_back(std::move(k));
  }
  return cases;
}

}  // namespace kvscope::test
