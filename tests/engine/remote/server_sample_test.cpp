#include "remote/server_sample.h"

#include <gtest/gtest.h>

#include "remote/watch_series.h"
#include "remote_fixtures.h"

namespace kvscope {
namespace {

ServerSample fixture_sample(const std::string& name) {
  return read_server_sample(parse_prometheus_text(test::read_remote_fixture(name)));
}

// Two scrapes of a fixture pair, ten seconds apart.
WatchPoint second_point(const std::string& stem) {
  WatchSeries series;
  series.add(100.0, fixture_sample(stem + "_1.prom"));
  return series.add(110.0, fixture_sample(stem + "_2.prom"));
}

TEST(ServerSample, ReadsVllmV1Names) {
  const ServerSample s = fixture_sample("vllm_v1_2.prom");
  EXPECT_EQ(s.kind, ServerKind::VllmV1);
  EXPECT_EQ(s.model_name, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_DOUBLE_EQ(*s.kv_usage, 0.9718);
  EXPECT_EQ(*s.running, 24);
  EXPECT_EQ(*s.waiting, 5);
  EXPECT_EQ(*s.preemptions, 3);
  EXPECT_EQ(*s.prefix_queries, 205000);
  EXPECT_EQ(*s.prefix_hits, 73000);
  EXPECT_EQ(*s.prompt_tokens, 206455);
  EXPECT_EQ(*s.generation_tokens, 99011);
  EXPECT_EQ(s.ttft.size(), 23u);  // 22 bounds + Inf
  EXPECT_EQ(s.ttft.back().count, 460);
  EXPECT_EQ(s.inter_token.size(), 20u);
  EXPECT_EQ(*s.kv_pool_blocks, 1952);
  EXPECT_EQ(*s.kv_block_size, 16);
  EXPECT_EQ(*s.kv_pool_tokens(), 31232);
  EXPECT_DOUBLE_EQ(*s.gpu_memory_utilization, 0.9);
  EXPECT_FALSE(s.prefix_hit_rate);
}

TEST(ServerSample, ReadsVllmV0Names) {
  const ServerSample s = fixture_sample("vllm_v0_2.prom");
  EXPECT_EQ(s.kind, ServerKind::VllmV0);
  EXPECT_DOUBLE_EQ(*s.kv_usage, 0.9921);
  EXPECT_EQ(*s.running, 31);
  EXPECT_EQ(*s.waiting, 7);
  EXPECT_EQ(*s.preemptions, 5);
  EXPECT_EQ(*s.prefix_hit_rate, 0.0);
  EXPECT_FALSE(s.prefix_queries);
  EXPECT_EQ(s.inter_token.size(), 14u);  // time_per_output_token_seconds
  EXPECT_EQ(*s.kv_pool_tokens(), 2512 * 16);
}

TEST(ServerSample, ReadsLlamaServerNamesOldAndNew) {
  const ServerSample old = fixture_sample("llama_server_kv_2.prom");
  EXPECT_EQ(old.kind, ServerKind::LlamaServer);
  EXPECT_DOUBLE_EQ(*old.kv_usage, 0.4421);
  EXPECT_EQ(*old.kv_tokens, 1811);
  EXPECT_EQ(*old.running, 4);
  EXPECT_EQ(*old.waiting, 3);
  EXPECT_EQ(*old.generation_tokens, 7967);
  EXPECT_EQ(*old.prompt_tokens, 34001);
  EXPECT_FALSE(old.preemptions);
  EXPECT_TRUE(old.ttft.empty());
  const ServerSample now = fixture_sample("llama_server_2.prom");
  EXPECT_EQ(now.kind, ServerKind::LlamaServer);
  EXPECT_FALSE(now.kv_usage);  // current builds do not report it
  EXPECT_EQ(*now.running, 4);
}

TEST(ServerSample, UnknownMetricsAreUnknownAndSumsCoverEveryEngine) {
  EXPECT_EQ(read_server_sample(parse_prometheus_text("go_goroutines 7\n")).kind,
            ServerKind::Unknown);
  const ServerSample two = read_server_sample(
      parse_prometheus_text("vllm:num_requests_running{engine=\"0\"} 3\n"
                            "vllm:num_requests_running{engine=\"1\"} 4\n"
                            "vllm:kv_cache_usage_perc{engine=\"0\"} 0.2\n"
                            "vllm:kv_cache_usage_perc{engine=\"1\"} 0.4\n"
                            "vllm:num_preemptions 2\n"));  // a counter without _total
  EXPECT_EQ(two.kind, ServerKind::VllmV1);
  EXPECT_EQ(*two.running, 7);
  EXPECT_DOUBLE_EQ(*two.kv_usage, 0.3);
  EXPECT_EQ(*two.preemptions, 2);
}

// KVScope's own server says its pool in blocks, its block size and the tokens it holds.
TEST(ServerSample, KvscopePoolIsBlocksTimesItsBlockSize) {
  const ServerSample s =
      read_server_sample(parse_prometheus_text("vllm:num_requests_running{model_name=\"m\"} 1\n"
                                               "kvscope_kv_blocks{group=\"0\",state=\"free\"} 90\n"
                                               "kvscope_kv_blocks{group=\"0\",state=\"used\"} 8\n"
                                               "kvscope_kv_blocks{group=\"0\",state=\"shared\"} 2\n"
                                               "kvscope_kv_block_size_tokens{model_name=\"m\"} 16\n"
                                               "kvscope_kv_tokens{model_name=\"m\"} 150\n"));
  EXPECT_EQ(*s.kv_pool_blocks, 100);
  EXPECT_EQ(*s.kv_block_size, 16);
  EXPECT_EQ(*s.kv_pool_tokens(), 1600);
  EXPECT_DOUBLE_EQ(*s.kv_tokens, 150.0);
}

TEST(ServerSample, AbsurdPoolLabelsAreIgnored) {
  const ServerSample s = read_server_sample(
      parse_prometheus_text("vllm:cache_config_info{block_size=\"1e300\",num_gpu_blocks=\"-5\"} 1\n"
                            "kvscope_kv_blocks{group=\"0\",state=\"free\"} 1e300\n"));
  EXPECT_FALSE(s.kv_block_size);
  EXPECT_FALSE(s.kv_pool_blocks);
  EXPECT_FALSE(s.kv_pool_tokens());
}

TEST(WatchSeries, TurnsVllmV1CountersIntoRatesAndHistogramsIntoWindowPercentiles) {
  const WatchPoint p = second_point("vllm_v1");
  EXPECT_DOUBLE_EQ(p.seconds, 10.0);
  EXPECT_DOUBLE_EQ(*p.kv_usage_pct, 97.18);
  EXPECT_DOUBLE_EQ(*p.generation_tokens_per_s, (99011.0 - 95211.0) / 10.0);
  EXPECT_DOUBLE_EQ(*p.prompt_tokens_per_s, (206455.0 - 183210.0) / 10.0);
  EXPECT_DOUBLE_EQ(*p.preemptions_per_s, 0.3);
  EXPECT_DOUBLE_EQ(*p.prefix_hit_pct, 100.0 * 12000.0 / 23000.0);
  // The window's 60 first tokens: 25 in (0.1, 0.25], 22 in (0.25, 0.5], 11 in (0.5, 0.75],
  // 2 in (0.75, 1]. p50: rank 30 -> 0.25 + 0.25 x 5/22; p90: rank 54 -> 0.5 + 0.25 x 7/11;
  // p99: rank 59.4 -> 0.75 + 0.25 x 1.4/2.
  EXPECT_NEAR(*p.ttft_p50, 0.25 + 0.25 * 5.0 / 22.0, 1e-12);
  EXPECT_NEAR(*p.ttft_p90, 0.5 + 0.25 * 7.0 / 11.0, 1e-12);
  EXPECT_NEAR(*p.ttft_p99, 0.75 + 0.25 * 1.4 / 2.0, 1e-12);
  // 300 new inter-token gaps: 21 <= 0.025, 216 in (0.025, 0.05]: p50 rank 150 -> 0.025 +
  // 0.025 x 129/216
  EXPECT_NEAR(*p.itl_p50, 0.025 + 0.025 * 129.0 / 216.0, 1e-12);
  EXPECT_NEAR(*p.kv_tokens, 0.9718 * 31232, 1e-9);
}

TEST(WatchSeries, ReadsLlamaServerAndVllmV0) {
  const WatchPoint llama = second_point("llama_server_kv");
  EXPECT_DOUBLE_EQ(*llama.generation_tokens_per_s, (7967.0 - 7801.0) / 10.0);
  EXPECT_EQ(*llama.kv_tokens, 1811);
  EXPECT_FALSE(llama.ttft_p50);
  EXPECT_FALSE(llama.prefix_hit_pct);
  const WatchPoint v0 = second_point("vllm_v0");
  EXPECT_DOUBLE_EQ(*v0.preemptions_per_s, 0.5);
  EXPECT_DOUBLE_EQ(*v0.prefix_hit_pct, 0.0);  // the v0 gauge
  EXPECT_NEAR(*v0.ttft_p50, 0.25 + 0.25 * 5.0 / 22.0, 1e-12);
}

TEST(WatchSeries, TheFirstScrapeHasNoRatesAndARestartCountsFromZero) {
  WatchSeries series;
  const WatchPoint first = series.add(5.0, fixture_sample("vllm_v1_2.prom"));
  EXPECT_FALSE(first.generation_tokens_per_s);
  EXPECT_FALSE(first.ttft_p50);
  EXPECT_TRUE(first.kv_usage_pct);
  // the server restarted: its counters are lower than before
  const WatchPoint after = series.add(7.0, fixture_sample("vllm_v1_1.prom"));
  EXPECT_DOUBLE_EQ(*after.generation_tokens_per_s, 95211.0 / 2.0);
}

TEST(WatchSeries, KeepsAtMostMaxPointsAndOnlyTheWindowsScrapes) {
  WatchSeries series(3.0, 5);
  for (int i = 0; i < 20; ++i) series.add(i, fixture_sample("llama_server_1.prom"));
  EXPECT_EQ(series.points().size(), 5u);
  EXPECT_DOUBLE_EQ(series.points().back().seconds, 19.0);
}

}  // namespace
}  // namespace kvscope
