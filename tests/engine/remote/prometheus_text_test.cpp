#include "remote/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>

#include "remote_fixtures.h"

namespace kvscope {
namespace {

TEST(PrometheusText, ReadsHelpTypeLabelsValuesAndTimestamps) {
  const MetricDump d = parse_prometheus_text(
      "# A plain comment\n"
      "# HELP http_requests_total The total number of HTTP requests.\\nSecond line \\\\ end\n"
      "# TYPE http_requests_total counter\n"
      "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
      "http_requests_total{method=\"post\",code=\"400\",}    3   1395066363000\n"
      "\n"
      "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find "
      "file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n"
      "metric_without_timestamp_and_labels 12.47\n"
      "  \tindented_metric -Inf\n"
      "nan_metric NaN\n"
      "plus_inf +Inf\n"
      "neg_timestamp 1 -5\n");
  ASSERT_EQ(d.families.size(), 7u);
  const MetricFamily* http = d.find("http_requests_total");
  ASSERT_NE(http, nullptr);
  EXPECT_EQ(http->type, MetricType::Counter);
  EXPECT_EQ(http->help, "The total number of HTTP requests.\nSecond line \\ end");
  ASSERT_EQ(http->samples.size(), 2u);
  EXPECT_EQ(http->samples[0].value, 1027);
  EXPECT_EQ(*http->samples[0].label("code"), "200");
  EXPECT_EQ(http->samples[1].labels.size(), 2u);  // trailing comma allowed
  EXPECT_EQ(http->samples[1].timestamp_ms, 1395066363000);
  const MetricSample& file = d.find("msdos_file_access_time_seconds")->samples[0];
  EXPECT_EQ(*file.label("path"), "C:\\DIR\\FILE.TXT");
  EXPECT_EQ(*file.label("error"), "Cannot find file:\n\"FILE.TXT\"");
  EXPECT_EQ(file.value, 1.458255915e9);
  EXPECT_EQ(d.find("metric_without_timestamp_and_labels")->type, MetricType::Untyped);
  EXPECT_EQ(d.find("indented_metric")->samples[0].value, -INFINITY);
  EXPECT_TRUE(std::isnan(d.find("nan_metric")->samples[0].value));
  EXPECT_EQ(d.find("plus_inf")->samples[0].value, INFINITY);
  EXPECT_EQ(d.find("neg_timestamp")->samples[0].timestamp_ms, -5);
}

TEST(PrometheusText, GroupsHistogramSummaryAndCounterSamplesIntoTheirFamily) {
  const MetricDump d = parse_prometheus_text(
      "# TYPE rpc_duration_seconds summary\n"
      "rpc_duration_seconds{quantile=\"0.5\"} 4773\n"
      "rpc_duration_seconds{quantile=\"0.99\"} 76656\n"
      "rpc_duration_seconds_sum 1.7560473e+07\n"
      "rpc_duration_seconds_count 2693\n"
      "# TYPE latency histogram\n"
      "latency_bucket{le=\"0.05\"} 24054\n"
      "latency_bucket{le=\"+Inf\"} 144320\n"
      "latency_sum 53423\n"
      "latency_count 144320\n"
      "# TYPE jobs counter\n"
      "jobs_total 7\n"
      "other_bucket{le=\"1\"} 2\n");
  ASSERT_EQ(d.families.size(), 4u);
  EXPECT_EQ(d.find("rpc_duration_seconds")->samples.size(), 4u);
  EXPECT_EQ(d.find("latency")->type, MetricType::Histogram);
  EXPECT_EQ(d.find("latency")->samples.size(), 4u);
  EXPECT_EQ(d.find("jobs")->samples.at(0).name, "jobs_total");
  EXPECT_EQ(d.find("other_bucket")->type, MetricType::Untyped);  // no histogram named other
}

MetricsFormatError parse_error(std::string_view text) {
  try {
    parse_prometheus_text(text);
  } catch (const MetricsFormatError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for: " << text;
  return MetricsFormatError("none", 0, false);
}

TEST(PrometheusText, RefusesBadLinesNamingTheLine) {
  struct Case {
    const char* text;
    const char* says;
    std::int64_t line;
  };
  const Case cases[] = {
      {"ok 1\n9bad 1\n", "line 2 '9bad 1': expected a metric name", 2},
      {"ok 1\nm{a=\"x\" 1\n", "expected ',' or '}'", 2},
      {"m{a=\"x\\t\"} 1\n", "unknown escape", 1},
      {"m{a=\"x\",a=\"y\"} 1\n", "label a given twice", 1},
      {"m{a=x} 1\n", "must be quoted", 1},
      {"m{a=\"x} 1\n", "not closed", 1},
      {"m 1 2 3\n", "text after the timestamp", 1},
      {"m one\n", "the value is not a number", 1},
      {"m 1 1.5\n", "the timestamp is not an integer", 1},
      {"m1\n", "expected a blank and a value after the name", 1},
      {"# TYPE m gauge\n# TYPE m counter\nm 1\n", "a second TYPE for m", 2},
      {"# HELP m a\n# HELP m b\n", "a second HELP for m", 2},
      {"m 1\n# TYPE m gauge\n", "TYPE for m after its samples", 2},
      {"# TYPE m gaige\n", "unknown metric type", 1},
      {"# TYPE h histogram\nh_bucket 1\n", "without its le label", 2},
      {"# TYPE h histogram\nh_bucket{le=\"x\"} 1\n", "le=\"x\" is not a number", 2},
      {"# HELP\n", "a metric name must follow", 1},
  };
  for (const Case& c : cases) {
    const MetricsFormatError e = parse_error(c.text);
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos)
        << c.text << " -> " << e.what();
    EXPECT_EQ(e.line(), c.line) << c.text;
  }
}

TEST(PrometheusText, ACutShortBodyIsRefusedAndHtmlIsNotMetrics) {
  const std::string dump = test::read_remote_fixture("vllm_v1_2.prom");
  const MetricsFormatError cut = parse_error(std::string_view(dump).substr(0, dump.size() / 2));
  EXPECT_NE(std::string(cut.what()).find("cut short"), std::string::npos) << cut.what();
  EXPECT_FALSE(cut.nothing_parsed());
  const MetricsFormatError html =
      parse_error("<!DOCTYPE html>\n<html><head><title>vLLM</title></head></html>\n");
  EXPECT_TRUE(html.nothing_parsed());
  EXPECT_EQ(html.line(), 1);
  EXPECT_TRUE(parse_error("{\"object\": \"error\"}").nothing_parsed());
}

TEST(PrometheusText, RefusesABodyOverTheLimitBeforeReadingIt) {
  const std::string big(kMaxMetricsBodyBytes + 1, '#');
  EXPECT_NE(std::string(parse_error(big).what()).find("over the"), std::string::npos);
}

TEST(PrometheusText, ParsesEveryFixture) {
  struct Fixture {
    const char* name;
    std::size_t families;
    std::size_t samples;
  };
  // families and samples counted with grep on the files: TYPE lines, non-comment lines
  const Fixture fixtures[] = {
      {"vllm_v0_1.prom", 13, 47},
      {"vllm_v1_1.prom", 21, 66},
      {"llama_server_kv_1.prom", 12, 12},
      {"llama_server_1.prom", 10, 10},
  };
  for (const Fixture& f : fixtures) {
    const MetricDump d = parse_prometheus_text(test::read_remote_fixture(f.name));
    EXPECT_EQ(d.families.size(), f.families) << f.name;
    EXPECT_EQ(d.sample_count(), f.samples) << f.name;
  }
}

}  // namespace
}  // namespace kvscope
