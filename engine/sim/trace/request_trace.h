// A request trace for the paged-vs-contiguous simulator: when each request arrives (in
// simulation steps) and how many prompt and output tokens it has. The generator is
// deterministic (sim_random.h): a spec and a seed give the same trace on every platform,
// and each request always consumes the same random draws, so changing one parameter (the
// arrival rate, a bound, max_context) leaves the other figures of every request as they were.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kvscope {

struct SimRequest {
  std::int64_t id = 0;       // 0 .. n - 1, in arrival order
  std::int64_t arrival = 0;  // step at which it joins the waiting queue
  std::int64_t prompt = 0;   // tokens stored at admission, >= 1
  std::int64_t output = 0;   // tokens generated afterwards, one per step, >= 1
  // Slots it holds when done.
  std::int64_t length() const { return prompt + output; }
};

struct LengthDistribution {
  enum class Kind { Uniform, LogNormal };
  Kind kind = Kind::LogNormal;
  // LogNormal: exp(ln(median) + sigma * N(0, 1)), rounded to the nearest integer.
  double median = 128.0;
  double sigma = 1.0;
  // Uniform: an integer in [min, max]. Every kind is clamped to [min, max].
  std::int64_t min = 1;
  std::int64_t max = 1024;
};

struct ArrivalProcess {
  enum class Kind { Poisson, Bursts };
  Kind kind = Kind::Poisson;
  // Poisson: exponential gaps with this mean rate (requests per step); the first request
  // arrives at step 0 and request i at floor(sum of the first i gaps).
  double rate = 0.1;
  // Bursts: request i arrives at step (i / burst_size) * burst_gap.
  std::int64_t burst_size = 1;
  std::int64_t burst_gap = 0;
};

struct TraceSpec {
  std::int64_t n_requests = 100;
  ArrivalProcess arrivals;
  LengthDistribution prompt;
  LengthDistribution output;
  // No request is longer: prompt <= max_context - 1, output <= max_context - prompt.
  std::int64_t max_context = 2048;
  std::uint64_t seed = 1;
};

// UsageError naming the field: n_requests outside [1, 1000000], a rate <= 0, a burst of
// < 1 request or a negative gap, a length bound < 1 or max < min, median <= 0, sigma < 0,
// max_context < 2.
void validate_trace_spec(const TraceSpec& spec);

// The trace the spec describes (validated first).
std::vector<SimRequest> generate_trace(const TraceSpec& spec);

// UsageError unless the trace is non-empty, ids are 0 .. n - 1 in order, arrivals do not
// decrease, every prompt and output is >= 1 and every length <= max_context.
void validate_trace(std::span<const SimRequest> trace, std::int64_t max_context);

}  // namespace kvscope
