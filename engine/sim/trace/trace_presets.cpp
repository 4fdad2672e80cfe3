#include "sim/trace/trace_presets.h"

#include "util/error.h"

namespace kvscope {
namespace {

LengthDistribution log_normal(double median, double sigma, std::int64_t min, std::int64_t max) {
  return {LengthDistribution::Kind::LogNormal, median, sigma, min, max};
}

// Log-normal means are median * exp(sigma^2 / 2): chat prompts 100 * e^0.5 = 165 and
// outputs 250 * e^0.32 = 344 tokens, close to ShareGPT's 161 and 338 in vLLM's paper.
TracePreset chat() {
  TracePreset p;
  p.name = "chat";
  p.description = "ShareGPT-like chat: prompts ~165, outputs ~340 tokens, steady arrivals";
  p.spec.n_requests = 200;
  p.spec.arrivals = {ArrivalProcess::Kind::Poisson, 0.15, 1, 0};
  p.spec.prompt = log_normal(100.0, 1.0, 4, 1024);
  p.spec.output = log_normal(250.0, 0.8, 4, 1024);
  p.spec.max_context = 2048;
  p.capacity = 8192;
  return p;
}

TracePreset api_burst() {
  TracePreset p;
  p.name = "api-burst";
  p.description = "API bursts: 96 short requests at once every 64 steps";
  p.spec.n_requests = 384;
  p.spec.arrivals = {ArrivalProcess::Kind::Bursts, 0.0, 96, 64};
  p.spec.prompt = log_normal(64.0, 0.6, 8, 512);
  p.spec.output = log_normal(32.0, 0.7, 1, 256);
  p.spec.max_context = 1024;
  p.capacity = 8192;
  return p;
}

TracePreset long_documents() {
  TracePreset p;
  p.name = "long-documents";
  p.description = "Long documents: prompts ~3000 tokens, answers ~200";
  p.spec.n_requests = 40;
  p.spec.arrivals = {ArrivalProcess::Kind::Poisson, 0.02, 1, 0};
  p.spec.prompt = log_normal(3000.0, 0.5, 512, 7168);
  p.spec.output = log_normal(200.0, 0.6, 16, 1024);
  p.spec.max_context = 8192;
  p.capacity = 32768;
  return p;
}

}  // namespace

const std::vector<TracePreset>& trace_presets() {
  static const std::vector<TracePreset> presets = {chat(), api_burst(), long_documents()};
  return presets;
}

const TracePreset& find_trace_preset(std::string_view name) {
  std::string names;
  for (const TracePreset& p : trace_presets()) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw_error<UsageError>("unknown trace '{}' (known: {})", name, names);
}

}  // namespace kvscope
