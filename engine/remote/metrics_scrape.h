// One GET of a server's /metrics over plain HTTP (cpp-httplib's client), with every way it
// can go wrong named for the user instead of thrown: nothing listening, no answer in time,
// an HTTP error, an HTML page or JSON where metrics were expected, a body cut short or
// malformed, a body too large. A scrape never throws and never waits past its timeouts.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "remote/prometheus_text.h"

namespace kvscope {

struct MetricsEndpoint {
  std::string host;  // "127.0.0.1", "localhost", "::1"
  int port = 80;
  std::string path;         // "/metrics"
  std::string url() const;  // "http://127.0.0.1:8000/metrics"
};

// "http://HOST:PORT[/PATH]", "HOST:PORT" or "HOST" (http, port 80), "[::1]:8000"; no path
// or "/" means /metrics. UsageError naming the text for anything else (https, a user:pass@,
// a port out of 1-65535, a query or fragment, spaces).
MetricsEndpoint parse_metrics_url(std::string_view url);

enum class ScrapeStatus {
  Ok,
  Refused,     // connection refused or host unreachable: nothing listens there
  Timeout,     // no connection, or no whole answer, within the timeouts
  HttpError,   // an answer other than 200
  NotMetrics,  // HTML, JSON, an empty body, or text whose first line is not Prometheus'
  Malformed,   // Prometheus text with a bad line, or cut short
  TooLarge,    // over ScrapeOptions::max_bytes
  Failed,      // the connection broke some other way (reset, closed mid-answer)
};

// "connected", "refused", "timed out", "HTTP error", "not metrics", "malformed", "too large",
// "failed"
std::string_view scrape_status_name(ScrapeStatus status);

struct ScrapeOptions {
  double connect_timeout = 2.0;  // seconds
  double read_timeout = 2.0;     // seconds, per read
  std::size_t max_bytes = kMaxMetricsBodyBytes;
};

struct ScrapeResult {
  ScrapeStatus status = ScrapeStatus::Failed;
  std::string message;  // one line for the user
  int http_status = 0;
  std::size_t bytes = 0;
  double seconds = 0.0;            // how long the GET took
  std::optional<MetricDump> dump;  // when status is Ok
  bool ok() const { return status == ScrapeStatus::Ok; }
};

ScrapeResult scrape_metrics(const MetricsEndpoint& endpoint, const ScrapeOptions& options = {});

// What a body is, for a scrape that answered 200: Ok with its dump, NotMetrics or Malformed.
ScrapeResult read_metrics_body(std::string_view body, std::string_view content_type);

}  // namespace kvscope
