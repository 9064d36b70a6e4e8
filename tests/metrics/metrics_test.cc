// The Prometheus registry and exporter: the text exposition format (HELP/TYPE lines, labels and
// their escaping, cumulative histogram buckets with +Inf, _sum and _count), shape checks on
// re-registration, and /metrics served over loopback HTTP.

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>
#include <vector>

#include "core/error.h"
#include "metrics/exporter.h"
#include "metrics/metrics.h"
#include "metrics/scrape.h"

namespace binberg::metrics {
namespace {

TEST(MetricsTest, RendersCountersAndGaugesWithEscapedLabels) {
  Registry registry;
  Family& events = registry.counter("x_events_total", "Events applied", {"table", "op"});
  events.counter({"db.t", "insert"}).add(3);
  events.counter({"db.t", "insert"}).add();
  events.counter({"we\"ird\\name\n", "delete"}).add(2);
  registry.gauge("x_lag_seconds", "Lag").gauge().set(1.5);
  EXPECT_EQ(registry.render(),
            "# HELP x_events_total Events applied\n"
            "# TYPE x_events_total counter\n"
            "x_events_total{table=\"db.t\",op=\"insert\"} 4\n"
            "x_events_total{table=\"we\\\"ird\\\\name\\n\",op=\"delete\"} 2\n"
            "# HELP x_lag_seconds Lag\n"
            "# TYPE x_lag_seconds gauge\n"
            "x_lag_seconds 1.5\n");
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry registry;
  Histogram& histogram = registry.histogram("x_seconds", "Durations", {0.1, 1}).histogram();
  for (double value : {0.05, 0.1, 0.5, 3.0}) histogram.observe(value);
  EXPECT_EQ(registry.render(),
            "# HELP x_seconds Durations\n"
            "# TYPE x_seconds histogram\n"
            "x_seconds_bucket{le=\"0.1\"} 2\n"
            "x_seconds_bucket{le=\"1\"} 3\n"
            "x_seconds_bucket{le=\"+Inf\"} 4\n"
            "x_seconds_sum 3.65\n"
            "x_seconds_count 4\n");
}

TEST(MetricsTest, ReRegistrationReturnsTheFamilyOrRefusesAnotherShape) {
  Registry registry;
  Family& first = registry.counter("x_total", "Help", {"a"});
  EXPECT_EQ(&registry.counter("x_total", "Help", {"a"}), &first);
  EXPECT_THROW(registry.gauge("x_total", "Help", {"a"}), Error);
  EXPECT_THROW(registry.counter("x_total", "Help", {"b"}), Error);
  EXPECT_THROW(first.counter({"1", "2"}), Error) << "label values must match label names";
  EXPECT_THROW(first.gauge({"1"}), Error) << "a counter family has no gauges";
}

TEST(MetricsTest, ConcurrentUpdatesAreNotLost) {
  Registry registry;
  Counter& counter = registry.counter("x_total", "Help").counter();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10'000; ++i) counter.add();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(counter.value(), 40'000);
}

TEST(MetricsTest, HelpTextEscapesBackslashAndNewlineButNotQuotes) {
  Registry registry;
  registry.gauge("x", "a\\b\nc \"q\"").gauge().set(1);
  EXPECT_EQ(registry.render(), "# HELP x a\\\\b\\nc \"q\"\n# TYPE x gauge\nx 1\n");
}

TEST(MetricsTest, FormatsSpecialValues) {
  EXPECT_EQ(format_value(12), "12");
  EXPECT_EQ(format_value(-0.25), "-0.25");
  EXPECT_EQ(format_value(1.0 / 0.0), "+Inf");
  EXPECT_EQ(format_value(0.0 / 0.0), "NaN");
}

TEST(ExporterTest, ServesMetricsOnLoopback) {
  Registry registry;
  registry.counter("x_total", "Help").counter().add(7);
  Exporter exporter(registry, "127.0.0.1:0");
  ASSERT_TRUE(exporter.url().starts_with("http://127.0.0.1:")) << exporter.url();
  const std::string origin = exporter.url().substr(0, exporter.url().size() - std::string("/metrics").size());
  httplib::Client client(origin);
  auto response = client.Get("/metrics");
  ASSERT_TRUE(response) << httplib::to_string(response.error());
  EXPECT_EQ(response->status, 200);
  EXPECT_NE(response->body.find("x_total 7\n"), std::string::npos) << response->body;
  EXPECT_EQ(response->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(client.Get("/healthz")->body, "ok\n");
  EXPECT_EQ(client.Get("/other")->status, 404);
}

TEST(ExporterTest, RejectsBadAddressesClearly) {
  Registry registry;
  EXPECT_THROW(Exporter(registry, "9464"), ConfigError);
  EXPECT_THROW(Exporter(registry, "127.0.0.1:99999"), ConfigError);
  EXPECT_THROW(Exporter(registry, "127.0.0.1:x"), ConfigError);
  Exporter taken(registry, "127.0.0.1:0");
  const std::string port = taken.url().substr(17, taken.url().rfind('/') - 17);
  try {
    Exporter again(registry, "127.0.0.1:" + port);
    ADD_FAILURE() << "bound a port in use";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("127.0.0.1:" + port), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace binberg::metrics

namespace binberg::metrics {
namespace {

constexpr const char* kExposition =
    "# TYPE binberg_sink_lag_seconds gauge\n"
    "binberg_sink_lag_seconds{topic=\"t\",partition=\"0\"} 1.5\n"
    "binberg_sink_lag_seconds{topic=\"t\",partition=\"1\"} 4\n"
    "binberg_sink_lag_seconds{topic=\"t\",partition=\"2\"} 0\n"
    "binberg_sink_lag_seconds_other 99\n";

TEST(ScrapeTest, SumsMaximaAndCountsOnlyTheNamedMetric) {
  EXPECT_DOUBLE_EQ(sample_sum(kExposition, "binberg_sink_lag_seconds"), 5.5);
  EXPECT_DOUBLE_EQ(sample_sum(kExposition, "binberg_sink_lag_seconds", {"partition=\"1\""}), 4);
  EXPECT_EQ(sample_max(kExposition, "binberg_sink_lag_seconds"), 4.0);
  EXPECT_EQ(sample_count(kExposition, "binberg_sink_lag_seconds"), 3u);
  EXPECT_FALSE(sample_max(kExposition, "binberg_sink_lag_records").has_value());
}

}  // namespace
}  // namespace binberg::metrics
