// The Prometheus text exposition format, version 0.0.4: what a server's GET /metrics answers
// (vLLM through prometheus_client, llama-server, KVScope's own server).
//
//   # HELP name docstring            (docstring escapes: \\ and \n)
//   # TYPE name counter|gauge|histogram|summary|untyped
//   # any other comment
//   name{label="value",...} value [timestamp_ms]
//
// Names are [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*, label values
// escape \\, \" and \n; a value is a float (NaN, +Inf, -Inf too), the timestamp an integer
// in milliseconds. Lines end with a line feed, the last one too: a body whose last line has
// none was cut short, and is refused as Prometheus itself refuses a scrape with a bad line.
//
// Samples are grouped into families by their TYPE line: a histogram family F holds
// F_bucket{le=...}, F_sum and F_count; a summary F{quantile=...}, F_sum and F_count; a
// counter F (prometheus_client names it F_total and writes TYPE for F_total). A sample no
// TYPE line claims is its own untyped family.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace kvscope {

// The body is not Prometheus text, or a line of it is malformed. The message names the line
// (1-based) and quotes a bounded prefix of it.
class MetricsFormatError : public Error {
 public:
  MetricsFormatError(const std::string& message, std::int64_t line, bool first_line)
      : Error(message), line_(line), first_line_(first_line) {}
  std::int64_t line() const { return line_; }
  // True when nothing before the bad line was a sample or a HELP/TYPE line: the body is
  // probably not metrics at all (an HTML page, JSON, a login form).
  bool nothing_parsed() const { return first_line_; }

 private:
  std::int64_t line_;
  bool first_line_;
};

enum class MetricType { Untyped, Counter, Gauge, Histogram, Summary };
std::string_view metric_type_name(MetricType type);

struct MetricLabel {
  std::string name;
  std::string value;
  bool operator==(const MetricLabel&) const = default;
};

struct MetricSample {
  std::string name;  // the sample's own name: F_bucket, F_sum, F_total, ...
  std::vector<MetricLabel> labels;
  double value = 0.0;
  std::optional<std::int64_t> timestamp_ms;
  // The label's value, or nullptr.
  const std::string* label(std::string_view label_name) const;
};

struct MetricFamily {
  std::string name;
  MetricType type = MetricType::Untyped;
  std::string help;
  std::vector<MetricSample> samples;
};

struct MetricDump {
  std::vector<MetricFamily> families;  // in the order the body first names them
  // The family called `name`, or nullptr.
  const MetricFamily* find(std::string_view name) const;
  std::size_t sample_count() const;
};

// Bounds on what one body may cost (bad-inputs.md: memory a small multiple of the input).
inline constexpr std::size_t kMaxMetricsBodyBytes = std::size_t{16} << 20;
inline constexpr std::size_t kMaxLabelsPerSample = 64;

// Parses a whole body; MetricsFormatError on the first bad line, an unknown TYPE, a second
// HELP or TYPE for one name, a TYPE after the family's samples, a body over
// kMaxMetricsBodyBytes or one cut short.
MetricDump parse_prometheus_text(std::string_view text);

}  // namespace kvscope
