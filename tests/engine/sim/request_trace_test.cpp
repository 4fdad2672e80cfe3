// The trace generator: reproducible from its seed, inside its bounds, each parameter
// changing only what it names; presets and validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/trace/request_trace.h"
#include "sim/trace/sim_random.h"
#include "sim/trace/trace_presets.h"
#include "util/error.h"

namespace kvscope {
namespace {

bool same(const std::vector<SimRequest>& a, const std::vector<SimRequest>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const SimRequest& x, const SimRequest& y) {
                      return x.id == y.id && x.arrival == y.arrival && x.prompt == y.prompt &&
                             x.output == y.output;
                    });
}

TEST(SimRandom, UniformDrawsStayInTheirIntervals) {
  SimRandom rng(7);
  for (int i = 0; i < 10000; ++i) {
    const double u = rng.uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    const double v = rng.uniform_open_zero();
    EXPECT_GT(v, 0.0);
    EXPECT_LE(v, 1.0);
  }
}

TEST(SimRandom, NormalAndExponentialHaveTheirMoments) {
  SimRandom rng(11);
  constexpr int n = 200000;
  double sum = 0, sq = 0, exp_sum = 0;
  for (int i = 0; i < n; ++i) {
    const double z = rng.normal();
    sum += z;
    sq += z * z;
    exp_sum += rng.exponential(0.25);
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.01);
  EXPECT_NEAR(exp_sum / n, 4.0, 0.05);
}

TEST(SimRandom, Mt19937SeedGivesTheStandardsSequence) {
  // The standard fixes mt19937_64's 10000th output for the default seed 5489; our draws
  // are built on it, so the same seed gives the same trace with any standard library.
  std::mt19937_64 engine;
  engine.discard(9999);
  EXPECT_EQ(engine(), 9981545732273789042ull);
}

TEST(RequestTrace, SameSpecAndSeedGiveTheSameTrace) {
  const TraceSpec spec = find_trace_preset("chat").spec;
  EXPECT_TRUE(same(generate_trace(spec), generate_trace(spec)));
  TraceSpec other = spec;
  other.seed = spec.seed + 1;
  EXPECT_FALSE(same(generate_trace(spec), generate_trace(other)));
}

TEST(RequestTrace, ChatSeedOneStartsWithItsRecordedRequests) {
  // Regression values recorded from this generator: a change to the transforms, the draw
  // order or the preset shows here first.
  const std::vector<SimRequest> t = generate_trace(find_trace_preset("chat").spec);
  ASSERT_GE(t.size(), 3u);
  const std::vector<SimRequest> want = {{0, 0, 349, 178}, {1, 17, 224, 276}, {2, 23, 167, 187}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(t[i].id, want[i].id);
    EXPECT_EQ(t[i].arrival, want[i].arrival);
    EXPECT_EQ(t[i].prompt, want[i].prompt);
    EXPECT_EQ(t[i].output, want[i].output);
  }
}

TEST(RequestTrace, LengthsStayInsideTheirBoundsAndTheContext) {
  for (const TracePreset& p : trace_presets()) {
    SCOPED_TRACE(p.name);
    TraceSpec spec = p.spec;
    spec.n_requests = 2000;
    const std::vector<SimRequest> t = generate_trace(spec);
    ASSERT_EQ(t.size(), 2000u);
    EXPECT_NO_THROW(validate_trace(t, spec.max_context));
    for (const SimRequest& r : t) {
      EXPECT_GE(r.prompt, spec.prompt.min);
      EXPECT_LE(r.prompt, spec.prompt.max);
      EXPECT_GE(r.output, 1);
      EXPECT_LE(r.length(), spec.max_context);
    }
  }
}

TEST(RequestTrace, LogNormalLengthsHaveTheirMedian) {
  TraceSpec spec;
  spec.n_requests = 20001;
  spec.prompt = {LengthDistribution::Kind::LogNormal, 300.0, 0.7, 1, 1000000};
  spec.output = {LengthDistribution::Kind::Uniform, 0, 0, 10, 20};
  spec.max_context = 10000000;
  std::vector<SimRequest> t = generate_trace(spec);
  std::vector<std::int64_t> prompts;
  for (const SimRequest& r : t) {
    prompts.push_back(r.prompt);
    EXPECT_GE(r.output, 10);
    EXPECT_LE(r.output, 20);
  }
  std::nth_element(prompts.begin(), prompts.begin() + 10000, prompts.end());
  EXPECT_NEAR(static_cast<double>(prompts[10000]), 300.0, 10.0);
}

TEST(RequestTrace, PoissonArrivalsComeAtTheirRate) {
  TraceSpec spec;
  spec.n_requests = 5000;
  spec.arrivals = {ArrivalProcess::Kind::Poisson, 0.2, 1, 0};
  const std::vector<SimRequest> t = generate_trace(spec);
  EXPECT_EQ(t.front().arrival, 0);
  const double rate = static_cast<double>(t.size() - 1) / static_cast<double>(t.back().arrival);
  EXPECT_NEAR(rate, 0.2, 0.01);
  for (std::size_t i = 1; i < t.size(); ++i) EXPECT_GE(t[i].arrival, t[i - 1].arrival);
}

TEST(RequestTrace, BurstsArriveTogether) {
  TraceSpec spec;
  spec.n_requests = 10;
  spec.arrivals = {ArrivalProcess::Kind::Bursts, 0.0, 4, 50};
  const std::vector<SimRequest> t = generate_trace(spec);
  const std::vector<std::int64_t> want = {0, 0, 0, 0, 50, 50, 50, 50, 100, 100};
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i].arrival, want[i]) << i;
}

TEST(RequestTrace, ChangingTheArrivalsKeepsEveryLength) {
  TraceSpec a = find_trace_preset("chat").spec;
  TraceSpec b = a;
  b.arrivals = {ArrivalProcess::Kind::Bursts, 0.0, 8, 10};
  const std::vector<SimRequest> ta = generate_trace(a);
  const std::vector<SimRequest> tb = generate_trace(b);
  for (std::size_t i = 0; i < ta.size(); ++i) {
    EXPECT_EQ(ta[i].prompt, tb[i].prompt) << i;
    EXPECT_EQ(ta[i].output, tb[i].output) << i;
  }
}

TEST(RequestTrace, ASmallerContextClampsLengthsAndKeepsArrivals) {
  TraceSpec a = find_trace_preset("chat").spec;
  TraceSpec b = a;
  b.max_context = 300;
  const std::vector<SimRequest> ta = generate_trace(a);
  const std::vector<SimRequest> tb = generate_trace(b);
  for (std::size_t i = 0; i < ta.size(); ++i) {
    EXPECT_EQ(ta[i].arrival, tb[i].arrival);
    EXPECT_EQ(tb[i].prompt, std::min<std::int64_t>(ta[i].prompt, 299));
    EXPECT_EQ(tb[i].output, std::min<std::int64_t>(ta[i].output, 300 - tb[i].prompt));
  }
}

TEST(RequestTrace, BadSpecsAreRejectedNamingTheField) {
  const auto message = [](const TraceSpec& s) {
    try {
      validate_trace_spec(s);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  TraceSpec s;
  s.n_requests = 0;
  EXPECT_NE(message(s).find("0 requests"), std::string::npos);
  s = {};
  s.arrivals.rate = 0.0;
  EXPECT_NE(message(s).find("rate 0"), std::string::npos);
  s = {};
  s.arrivals = {ArrivalProcess::Kind::Bursts, 0.0, 0, 5};
  EXPECT_NE(message(s).find("bursts of 0"), std::string::npos);
  s = {};
  s.prompt.min = 10;
  s.prompt.max = 5;
  EXPECT_NE(message(s).find("prompt lengths: bounds [10, 5]"), std::string::npos);
  s = {};
  s.output.sigma = -1.0;
  EXPECT_NE(message(s).find("output lengths: sigma -1"), std::string::npos);
  s = {};
  s.output.median = std::nan("");
  EXPECT_NE(message(s).find("output lengths: median"), std::string::npos);
  s = {};
  s.max_context = 1;
  EXPECT_NE(message(s).find("max context 1"), std::string::npos);
  EXPECT_THROW(generate_trace(s), UsageError);
}

TEST(RequestTrace, BadTracesAreRejected) {
  EXPECT_THROW(validate_trace({}, 10), UsageError);
  const std::vector<SimRequest> wrong_id = {{1, 0, 1, 1}};
  EXPECT_THROW(validate_trace(wrong_id, 10), UsageError);
  const std::vector<SimRequest> backwards = {{0, 5, 1, 1}, {1, 4, 1, 1}};
  EXPECT_THROW(validate_trace(backwards, 10), UsageError);
  const std::vector<SimRequest> empty_output = {{0, 0, 3, 0}};
  EXPECT_THROW(validate_trace(empty_output, 10), UsageError);
  const std::vector<SimRequest> too_long = {{0, 0, 6, 5}};
  EXPECT_THROW(validate_trace(too_long, 10), UsageError);
  EXPECT_NO_THROW(validate_trace(too_long, 11));
}

TEST(TracePresets, ThreeNamedPresetsAndAClearErrorForOthers) {
  ASSERT_EQ(trace_presets().size(), 3u);
  EXPECT_EQ(find_trace_preset("chat").name, "chat");
  EXPECT_EQ(find_trace_preset("api-burst").spec.arrivals.kind, ArrivalProcess::Kind::Bursts);
  EXPECT_GT(find_trace_preset("long-documents").spec.prompt.median, 1000.0);
  try {
    find_trace_preset("nope");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("chat, api-burst, long-documents"), std::string::npos);
  }
}

}  // namespace
}  // namespace kvscope
