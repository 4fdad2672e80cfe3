// The /metrics client against servers on loopback: a cpp-httplib server in the test serving
// the fixtures and every bad answer, a port nothing listens on, a socket that never answers.
#include "remote/metrics_scrape.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "remote/metrics_poller.h"
#include "remote/server_sample.h"
#include "remote_fixtures.h"

namespace kvscope {
namespace {

// A loopback server for one test: /metrics (a fixture), /html, /json, /empty, /cut (half a
// line), /garbled, /500, /slow (answers after 2 s), /big (over the scrape's limit).
class FixtureServer {
 public:
  FixtureServer() {
    const std::string metrics = test::read_remote_fixture("vllm_v1_2.prom");
    server_.Get("/metrics", [metrics](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics, "text/plain; version=0.0.4; charset=utf-8");
    });
    server_.Get("/html", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<!DOCTYPE html><html><title>Login</title></html>", "text/html");
    });
    server_.Get("/html-as-text", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("\n<html><body>hello</body></html>\n", "text/plain");
    });
    server_.Get("/json", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"detail\":\"Not Found\"}", "application/json");
    });
    server_.Get("/empty", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("", "text/plain");
    });
    server_.Get("/cut", [metrics](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics.substr(0, metrics.find("vllm:kv_cache_usage_perc{") + 40),
                      "text/plain");
    });
    server_.Get("/garbled", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("vllm:num_requests_running 3\nvllm:num_requests_waiting{ 1\n", "text/plain");
    });
    server_.Get("/500", [](const httplib::Request&, httplib::Response& res) {
      res.status = 500;
      res.set_content("Internal Server Error", "text/plain");
    });
    server_.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      res.set_content("m 1\n", "text/plain");
    });
    server_.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(64 * 1024, '#') + "\n", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // (cpp-httplib 0.11 has no wait_until_ready)
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~FixtureServer() {
    server_.stop();
    thread_.join();
  }
  MetricsEndpoint endpoint(const std::string& path) const { return {"127.0.0.1", port_, path}; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

ScrapeOptions quick() {
  ScrapeOptions o;
  o.connect_timeout = 1.0;
  o.read_timeout = 0.5;
  return o;
}

// A loopback port that was free a moment ago: nothing listens there.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(MetricsUrl, AcceptsTheUsualSpellingsAndRefusesTheRest) {
  const MetricsEndpoint a = parse_metrics_url("http://127.0.0.1:8000");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 8000);
  EXPECT_EQ(a.path, "/metrics");
  EXPECT_EQ(parse_metrics_url("localhost:8080/").path, "/metrics");
  EXPECT_EQ(parse_metrics_url("HTTP://host/prom/metrics").path, "/prom/metrics");
  EXPECT_EQ(parse_metrics_url("host").port, 80);
  const MetricsEndpoint v6 = parse_metrics_url("http://[::1]:9000/metrics");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.url(), "http://[::1]:9000/metrics");
  for (const char* bad : {"https://host:8000", "", "http://:80", "host:0", "host:70000", "host:80x",
                          "user:pw@host:80", "host:80/metrics?x=1", "[::1:80", "ftp://host"}) {
    EXPECT_THROW(parse_metrics_url(bad), UsageError) << bad;
  }
}

TEST(MetricsScrape, ReadsTheFixtureFromALoopbackServer) {
  FixtureServer server;
  const ScrapeResult r = scrape_metrics(server.endpoint("/metrics"), quick());
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(read_server_sample(*r.dump).kind, ServerKind::VllmV1);
  EXPECT_EQ(*read_server_sample(*r.dump).running, 24);
}

TEST(MetricsScrape, NamesEveryBadAnswer) {
  FixtureServer server;
  struct Case {
    const char* path;
    ScrapeStatus status;
    const char* says;
  };
  const Case cases[] = {
      {"/html", ScrapeStatus::NotMetrics, "HTML"},
      {"/html-as-text", ScrapeStatus::NotMetrics, "HTML"},
      {"/json", ScrapeStatus::NotMetrics, "JSON"},
      {"/empty", ScrapeStatus::NotMetrics, "empty"},
      {"/cut", ScrapeStatus::Malformed, "cut short"},
      {"/garbled", ScrapeStatus::Malformed, "line 2"},
      {"/500", ScrapeStatus::HttpError, "HTTP 500"},
      {"/nowhere", ScrapeStatus::HttpError, "HTTP 404"},
      {"/slow", ScrapeStatus::Timeout, "no answer within 0.5 s"},
  };
  for (const Case& c : cases) {
    const ScrapeResult r = scrape_metrics(server.endpoint(c.path), quick());
    EXPECT_EQ(r.status, c.status) << c.path << ": " << r.message;
    EXPECT_NE(r.message.find(c.says), std::string::npos) << c.path << ": " << r.message;
    EXPECT_FALSE(r.dump) << c.path;
  }
  ScrapeOptions small = quick();
  small.max_bytes = 1000;
  EXPECT_EQ(scrape_metrics(server.endpoint("/big"), small).status, ScrapeStatus::TooLarge);
}

TEST(MetricsScrape, ARefusedPortAndASilentListenerAreNamed) {
  const ScrapeResult refused = scrape_metrics({"127.0.0.1", closed_port(), "/metrics"}, quick());
  EXPECT_EQ(refused.status, ScrapeStatus::Refused) << refused.message;
  EXPECT_NE(refused.message.find("refused"), std::string::npos);
  // A socket that listens but never accepts: the connection is made, no answer comes.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const ScrapeResult silent =
      scrape_metrics({"127.0.0.1", ntohs(addr.sin_port), "/metrics"}, quick());
  ::close(fd);
  EXPECT_EQ(silent.status, ScrapeStatus::Timeout) << silent.message;
  EXPECT_LT(silent.seconds, 3.0);
}

TEST(MetricsPoller, ScrapesOnEveryTickAndKeepsTryingAfterFailures) {
  FixtureServer server;
  std::atomic<int> ok{0};
  std::atomic<int> refused{0};
  {
    MetricsPoller good(server.endpoint("/metrics"), 0.05, quick(), [&](PolledScrape s) {
      if (s.result.ok()) ++ok;
    });
    MetricsPoller bad({"127.0.0.1", closed_port(), "/metrics"}, 0.05, quick(), [&](PolledScrape s) {
      if (s.result.status == ScrapeStatus::Refused) ++refused;
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while ((ok < 3 || refused < 3) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }  // both stop here, waking from their wait
  EXPECT_GE(ok.load(), 3);
  EXPECT_GE(refused.load(), 3);
}

TEST(MetricsPoller, StopsPromptlyBetweenScrapes) {
  FixtureServer server;
  std::atomic<int> n{0};
  const auto start = std::chrono::steady_clock::now();
  {
    MetricsPoller p(server.endpoint("/metrics"), 30.0, quick(), [&](PolledScrape) { ++n; });
    while (n == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(n.load(), 1);
}

}  // namespace
}  // namespace kvscope
