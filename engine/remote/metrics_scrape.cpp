#include "remote/metrics_scrape.h"

#include <httplib.h>

#include <charconv>
#include <chrono>
#include <cmath>

#include "util/error.h"

namespace kvscope {

std::string_view scrape_status_name(ScrapeStatus status) {
  switch (status) {
    case ScrapeStatus::Ok:
      return "connected";
    case ScrapeStatus::Refused:
      return "refused";
    case ScrapeStatus::Timeout:
      return "timed out";
    case ScrapeStatus::HttpError:
      return "HTTP error";
    case ScrapeStatus::NotMetrics:
      return "not metrics";
    case ScrapeStatus::Malformed:
      return "malformed";
    case ScrapeStatus::TooLarge:
      return "too large";
    case ScrapeStatus::Failed:
      break;
  }
  return "failed";
}

std::string MetricsEndpoint::url() const {
  const bool v6 = host.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}{}", v6 ? "[" : "", host, v6 ? "]" : "", port, path);
}

namespace {

// A bounded, printable prefix of untrusted text for messages.
std::string excerpt(std::string_view text, std::size_t max = 60) {
  std::string out;
  for (char c : text.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  if (text.size() > max) out += "...";
  return out;
}

int parse_port(std::string_view text, std::string_view url) {
  int port = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || port < 1 ||
      port > 65535) {
    throw_error<UsageError>("metrics URL '{}': the port '{}' is not a number from 1 to 65535",
                            excerpt(url), excerpt(text));
  }
  return port;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

MetricsEndpoint parse_metrics_url(std::string_view url) {
  std::string_view rest = url;
  const std::string scheme = lower(rest.substr(0, rest.find("://") + 3));
  if (rest.find("://") != std::string_view::npos) {
    if (scheme != "http://") {
      throw_error<UsageError>(
          "metrics URL '{}': only http:// is supported (a server's /metrics on this machine or "
          "a trusted network)",
          excerpt(url));
    }
    rest.remove_prefix(7);
  }
  if (rest.empty()) throw_error<UsageError>("metrics URL is empty: give HOST:PORT");
  for (char c : rest) {
    if (c == '@' || c == '?' || c == '#' || c == ' ' || static_cast<unsigned char>(c) < 0x20) {
      throw_error<UsageError>("metrics URL '{}': '{}' is not allowed (give http://HOST:PORT/PATH)",
                              excerpt(url), c < 0x20 ? '?' : c);
    }
  }
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  MetricsEndpoint e;
  e.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (e.path == "/") e.path = "/metrics";
  if (!authority.empty() && authority.front() == '[') {  // [v6]:port
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      throw_error<UsageError>("metrics URL '{}': '[' without ']'", excerpt(url));
    }
    e.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty()) {
      if (authority.front() != ':')
        throw_error<UsageError>("metrics URL '{}': bad port", excerpt(url));
      e.port = parse_port(authority.substr(1), url);
    }
  } else {
    const std::size_t colon = authority.find(':');
    e.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) e.port = parse_port(authority.substr(colon + 1), url);
  }
  if (e.host.empty()) throw_error<UsageError>("metrics URL '{}': no host", excerpt(url));
  return e;
}

ScrapeResult read_metrics_body(std::string_view body, std::string_view content_type) {
  ScrapeResult r;
  r.bytes = body.size();
  const std::string type = lower(content_type);
  std::size_t first = body.find_first_not_of(" \t\r\n");
  const bool markup = first != std::string_view::npos && body[first] == '<';
  if (type.find("html") != std::string::npos || markup) {
    r.status = ScrapeStatus::NotMetrics;
    r.message = fmt::format("an HTML page, not metrics (starts '{}')", excerpt(body, 40));
    return r;
  }
  if (type.find("json") != std::string::npos ||
      (first != std::string_view::npos && (body[first] == '{' || body[first] == '['))) {
    r.status = ScrapeStatus::NotMetrics;
    r.message = fmt::format("JSON, not metrics (starts '{}')", excerpt(body, 40));
    return r;
  }
  if (first == std::string_view::npos) {
    r.status = ScrapeStatus::NotMetrics;
    r.message = "an empty answer: no metrics";
    return r;
  }
  try {
    r.dump = parse_prometheus_text(body);
    r.status = ScrapeStatus::Ok;
    r.message =
        fmt::format("{} metrics, {} samples", r.dump->families.size(), r.dump->sample_count());
  } catch (const MetricsFormatError& e) {
    r.status = e.nothing_parsed() ? ScrapeStatus::NotMetrics : ScrapeStatus::Malformed;
    r.message = e.nothing_parsed() ? fmt::format("not Prometheus text: {}", e.what()) : e.what();
  }
  return r;
}

namespace {

void set_timeout(httplib::Client& client, double seconds, bool connect) {
  const auto sec = static_cast<time_t>(seconds);
  const auto usec = static_cast<time_t>(std::lround((seconds - static_cast<double>(sec)) * 1e6));
  if (connect) {
    client.set_connection_timeout(sec, usec);
  } else {
    client.set_read_timeout(sec, usec);
    client.set_write_timeout(sec, usec);
  }
}

// A failed GET's status: httplib says Connection for refused (and unreachable) and
// ConnectionTimeout for a connect that did not finish; a read that waited the whole read
// timeout is a timeout, any other broken read a failure.
ScrapeResult transport_error(httplib::Error error, double seconds, const ScrapeOptions& o,
                             const MetricsEndpoint& e, bool too_large) {
  ScrapeResult r;
  r.seconds = seconds;
  if (too_large) {
    r.status = ScrapeStatus::TooLarge;
    r.message = fmt::format("the answer passed {} bytes; stopped reading", o.max_bytes);
  } else if (error == httplib::Error::Connection) {
    r.status = ScrapeStatus::Refused;
    r.message = fmt::format("connection refused: nothing listens at {}:{}", e.host, e.port);
  } else if (error == httplib::Error::ConnectionTimeout) {
    r.status = ScrapeStatus::Timeout;
    r.message =
        fmt::format("no connection to {}:{} within {:g} s", e.host, e.port, o.connect_timeout);
  } else if (error == httplib::Error::Read && seconds >= 0.9 * o.read_timeout) {
    r.status = ScrapeStatus::Timeout;
    r.message = fmt::format("connected, but no answer within {:g} s", o.read_timeout);
  } else {
    r.status = ScrapeStatus::Failed;
    r.message = fmt::format("the connection failed: {}", httplib::to_string(error));
  }
  return r;
}

}  // namespace

ScrapeResult scrape_metrics(const MetricsEndpoint& e, const ScrapeOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  httplib::Client client(e.host, e.port);
  set_timeout(client, o.connect_timeout, true);
  set_timeout(client, o.read_timeout, false);
  client.set_keep_alive(false);
  std::string body;
  bool too_large = false;
  const httplib::Headers headers = {{"Accept", "text/plain;version=0.0.4"}};
  httplib::Result res = client.Get(e.path, headers, [&](const char* data, std::size_t n) {
    if (body.size() + n > o.max_bytes) {
      too_large = true;
      return false;
    }
    body.append(data, n);
    return true;
  });
  if (!res) return transport_error(res.error(), elapsed(), o, e, too_large);
  ScrapeResult r;
  if (res->status != 200) {
    r.status = ScrapeStatus::HttpError;
    r.message = fmt::format("HTTP {} from {}{}{}", res->status, e.url(), body.empty() ? "" : ": ",
                            excerpt(body));
  } else {
    r = read_metrics_body(body, res->get_header_value("Content-Type"));
  }
  r.http_status = res->status;
  r.bytes = body.size();
  r.seconds = elapsed();
  return r;
}

}  // namespace kvscope
