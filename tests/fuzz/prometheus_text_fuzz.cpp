// libFuzzer harness: a /metrics body as engine/remote reads it from a server: the Prometheus
// text parser, the vLLM / llama-server / KVScope names, and the percentiles of every
// histogram found.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "remote/histogram_quantile.h"
#include "remote/metrics_scrape.h"
#include "remote/server_sample.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const kvscope::ScrapeResult r = kvscope::read_metrics_body(body, "text/plain");
  if (!r.dump) return 0;
  const kvscope::ServerSample s = kvscope::read_server_sample(*r.dump);
  (void)kvscope::histogram_quantile(0.5, s.ttft);
  (void)kvscope::histogram_quantile(0.99, s.inter_token);
  for (const kvscope::MetricFamily& f : r.dump->families) {
    (void)kvscope::histogram_quantile(0.9, kvscope::merged_buckets(f));
  }
  return 0;
}
