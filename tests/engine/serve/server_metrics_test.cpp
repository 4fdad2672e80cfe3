#include "serve/server_metrics.h"

#include <string>

#include <gtest/gtest.h>

namespace kvscope::serve {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

RequestResult finished(FinishReason reason, std::int64_t prompt, std::int64_t generated,
                       std::int64_t reused) {
  RequestResult r;
  r.reason = reason;
  r.prompt_tokens = prompt;
  r.generated.assign(static_cast<std::size_t>(generated), 1);
  r.reused_tokens = reused;
  return r;
}

TEST(Histogram, CountsEachValueInTheFirstBucketThatHoldsIt) {
  Histogram h({0.1, 1.0});
  h.observe(0.05);
  h.observe(0.1);  // le="0.1" holds 0.1 itself
  h.observe(0.5);
  h.observe(7.0);
  EXPECT_EQ(h.counts, (std::vector<std::int64_t>{2, 1, 1}));
  EXPECT_EQ(h.count, 4);
  EXPECT_DOUBLE_EQ(h.sum, 7.65);
}

TEST(ServerMetrics, WritesVllmNamesWithCountsOfFinishedRequests) {
  ServerMetrics m;
  m.request_admitted(10);
  m.request_admitted(12);
  m.first_token(0.03);
  m.next_token(0.02);
  m.request_finished(finished(FinishReason::StopString, 10, 4, 0), 0.2);
  m.request_finished(finished(FinishReason::Length, 12, 8, 9), 0.4);
  m.request_rejected(400);
  EngineGauges g;
  g.running = 2;
  g.waiting = 1;
  g.kv_usage = 0.25;
  g.preemptions = 3;
  g.groups = {{5, 2, 1}};
  g.layer_bytes = {100, 200};
  g.block_size = 16;
  g.kv_tokens = 40;
  const std::string t = m.text(g, "stories\"260K");
  const std::string label = R"(model_name="stories\"260K")";
  EXPECT_TRUE(has_line(t, "vllm:num_requests_running{" + label + "} 2")) << t;
  EXPECT_TRUE(has_line(t, "vllm:num_requests_waiting{" + label + "} 1"));
  EXPECT_TRUE(has_line(t, "vllm:kv_cache_usage_perc{" + label + "} 0.25"));
  EXPECT_TRUE(has_line(t, "vllm:num_preemptions_total{" + label + "} 3"));
  EXPECT_TRUE(has_line(t, "vllm:prompt_tokens_total{" + label + "} 22"));
  EXPECT_TRUE(has_line(t, "vllm:generation_tokens_total{" + label + "} 12"));
  EXPECT_TRUE(has_line(t, "vllm:prefix_cache_queries_total{" + label + "} 22"));
  EXPECT_TRUE(has_line(t, "vllm:prefix_cache_hits_total{" + label + "} 9"));
  EXPECT_TRUE(has_line(t, "vllm:request_success_total{" + label + ",finished_reason=\"stop\"} 1"));
  EXPECT_TRUE(
      has_line(t, "vllm:request_success_total{" + label + ",finished_reason=\"length\"} 1"));
  EXPECT_TRUE(has_line(t, "vllm:request_success_total{" + label + ",finished_reason=\"abort\"} 0"));
  EXPECT_TRUE(has_line(t, "vllm:time_to_first_token_seconds_bucket{" + label + ",le=\"0.02\"} 0"));
  EXPECT_TRUE(has_line(t, "vllm:time_to_first_token_seconds_bucket{" + label + ",le=\"0.04\"} 1"));
  EXPECT_TRUE(has_line(t, "vllm:time_to_first_token_seconds_bucket{" + label + ",le=\"+Inf\"} 1"));
  EXPECT_TRUE(has_line(t, "vllm:time_to_first_token_seconds_count{" + label + "} 1"));
  EXPECT_TRUE(has_line(t, "vllm:inter_token_latency_seconds_count{" + label + "} 1"));
  EXPECT_TRUE(has_line(t, "vllm:e2e_request_latency_seconds_count{" + label + "} 2"));
  EXPECT_TRUE(has_line(t, "kvscope_kv_blocks{group=\"0\",state=\"free\"} 5"));
  EXPECT_TRUE(has_line(t, "kvscope_kv_blocks{group=\"0\",state=\"used\"} 2"));
  EXPECT_TRUE(has_line(t, "kvscope_kv_blocks{group=\"0\",state=\"shared\"} 1"));
  EXPECT_TRUE(has_line(t, "kvscope_kv_bytes{layer=\"1\"} 200"));
  EXPECT_TRUE(has_line(t, "kvscope_kv_block_size_tokens{" + label + "} 16"));
  EXPECT_TRUE(has_line(t, "kvscope_kv_tokens{" + label + "} 40"));
  EXPECT_TRUE(has_line(t, "kvscope_api_rejected_total{status=\"400\"} 1"));
  EXPECT_TRUE(has_line(t, "# TYPE vllm:time_to_first_token_seconds histogram"));
  EXPECT_TRUE(has_line(t, "# TYPE vllm:num_requests_running gauge"));
}

TEST(ServerMetrics, CancelledRequestsCountAsAbortAndErrorsApart) {
  ServerMetrics m;
  m.request_finished(finished(FinishReason::Cancelled, 3, 1, 0), 0.1);
  m.request_finished(finished(FinishReason::Error, 3, 0, 0), 0.1);
  m.request_finished(finished(FinishReason::ContextFull, 3, 2, 0), 0.1);
  m.request_finished(finished(FinishReason::EndOfGeneration, 3, 2, 0), 0.1);
  const std::string t = m.text({}, "m");
  EXPECT_TRUE(
      has_line(t, R"(vllm:request_success_total{model_name="m",finished_reason="abort"} 1)"));
  EXPECT_TRUE(
      has_line(t, R"(vllm:request_success_total{model_name="m",finished_reason="error"} 1)"));
  EXPECT_TRUE(
      has_line(t, R"(vllm:request_success_total{model_name="m",finished_reason="length"} 1)"));
  EXPECT_TRUE(
      has_line(t, R"(vllm:request_success_total{model_name="m",finished_reason="stop"} 1)"));
}

TEST(ServerMetrics, CountsConnectionsInFlight) {
  ServerMetrics m;
  m.connection_opened();
  m.connection_opened();
  m.connection_closed();
  EXPECT_EQ(m.connections(), 1);
  EXPECT_TRUE(has_line(m.text({}, "m"), R"(kvscope_http_connections{model_name="m"} 1)"));
}

}  // namespace
}  // namespace kvscope::serve
