#include "sim/trace/request_trace.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/trace/sim_random.h"
#include "util/error.h"

namespace kvscope {
namespace {

constexpr std::int64_t kMaxRequests = 1'000'000;

void validate_lengths(const LengthDistribution& d, const char* name) {
  if (d.min < 1 || d.max < d.min) {
    throw_error<UsageError>("trace {} lengths: bounds [{}, {}] (need 1 <= min <= max)", name, d.min,
                            d.max);
  }
  if (d.kind == LengthDistribution::Kind::LogNormal) {
    if (!(d.median > 0.0) || !std::isfinite(d.median)) {
      throw_error<UsageError>("trace {} lengths: median {} (need > 0)", name, d.median);
    }
    if (!(d.sigma >= 0.0) || !std::isfinite(d.sigma)) {
      throw_error<UsageError>("trace {} lengths: sigma {} (need >= 0)", name, d.sigma);
    }
  }
}

// Always two draws, whatever the kind, so every request consumes the same randomness.
std::int64_t draw_length(SimRandom& rng, const LengthDistribution& d) {
  const double u = rng.uniform();
  const double z = rng.normal();
  double x = 0.0;
  if (d.kind == LengthDistribution::Kind::Uniform) {
    x = static_cast<double>(d.min) + std::floor(u * static_cast<double>(d.max - d.min + 1));
  } else {
    x = std::round(d.median * std::exp(d.sigma * z));
  }
  // Clamp in double first: a huge draw must not overflow the integer conversion.
  x = std::clamp(x, static_cast<double>(d.min), static_cast<double>(d.max));
  return static_cast<std::int64_t>(x);
}

}  // namespace

void validate_trace_spec(const TraceSpec& spec) {
  if (spec.n_requests < 1 || spec.n_requests > kMaxRequests) {
    throw_error<UsageError>("trace: {} requests (need 1 to {})", spec.n_requests, kMaxRequests);
  }
  const ArrivalProcess& a = spec.arrivals;
  if (a.kind == ArrivalProcess::Kind::Poisson && (!(a.rate > 0.0) || !std::isfinite(a.rate))) {
    throw_error<UsageError>("trace arrivals: rate {} requests per step (need > 0)", a.rate);
  }
  if (a.kind == ArrivalProcess::Kind::Bursts && (a.burst_size < 1 || a.burst_gap < 0)) {
    throw_error<UsageError>(
        "trace arrivals: bursts of {} requests every {} steps (need >= 1 request, gap >= 0)",
        a.burst_size, a.burst_gap);
  }
  validate_lengths(spec.prompt, "prompt");
  validate_lengths(spec.output, "output");
  if (spec.max_context < 2) {
    throw_error<UsageError>("trace: max context {} (need >= 2: one prompt and one output token)",
                            spec.max_context);
  }
}

std::vector<SimRequest> generate_trace(const TraceSpec& spec) {
  validate_trace_spec(spec);
  SimRandom rng(spec.seed);
  std::vector<SimRequest> trace;
  trace.reserve(static_cast<std::size_t>(spec.n_requests));
  double clock = 0.0;  // Poisson arrival time, in steps
  for (std::int64_t i = 0; i < spec.n_requests; ++i) {
    SimRequest r;
    r.id = i;
    const double gap = rng.exponential(
        spec.arrivals.kind == ArrivalProcess::Kind::Poisson ? spec.arrivals.rate : 1.0);
    if (spec.arrivals.kind == ArrivalProcess::Kind::Poisson) {
      if (i > 0) clock += gap;
      r.arrival = static_cast<std::int64_t>(std::min(
          std::floor(clock), static_cast<double>(std::numeric_limits<std::int32_t>::max())));
    } else {
      r.arrival = (i / spec.arrivals.burst_size) * spec.arrivals.burst_gap;
    }
    r.prompt = std::min(draw_length(rng, spec.prompt), spec.max_context - 1);
    r.output = std::min(draw_length(rng, spec.output), spec.max_context - r.prompt);
    trace.push_back(r);
  }
  return trace;
}

void validate_trace(std::span<const SimRequest> trace, std::int64_t max_context) {
  if (trace.empty()) throw_error<UsageError>("trace: no requests");
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const SimRequest& r = trace[i];
    if (r.id != static_cast<std::int64_t>(i)) {
      throw_error<UsageError>("trace: request at index {} has id {} (ids must be 0 .. n - 1)", i,
                              r.id);
    }
    if (r.arrival < 0) {
      throw_error<UsageError>("trace: request {} arrives at step {} (need >= 0)", r.id, r.arrival);
    }
    if (i > 0 && r.arrival < trace[i - 1].arrival) {
      throw_error<UsageError>("trace: request {} arrives at step {}, before request {} ({})", r.id,
                              r.arrival, trace[i - 1].id, trace[i - 1].arrival);
    }
    if (r.prompt < 1 || r.output < 1) {
      throw_error<UsageError>("trace: request {} has {} prompt and {} output tokens (need >= 1)",
                              r.id, r.prompt, r.output);
    }
    if (r.prompt > max_context - r.output) {
      throw_error<UsageError>("trace: request {} needs {} + {} tokens, more than max context {}",
                              r.id, r.prompt, r.output, max_context);
    }
  }
}

}  // namespace kvscope
