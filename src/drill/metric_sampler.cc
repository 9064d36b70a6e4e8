#include "drill/metric_sampler.h"

#include <spdlog/spdlog.h>

#include "drill/drill_run.h"
#include "drill/signals.h"
#include "metrics/scrape.h"

namespace binberg::drill {
namespace {

enum class Reading {
  kGauge,           // the sum of its samples (every partition's lag)
  kLargest,         // the largest of its samples (the partition furthest behind)
  kHistogramMean,   // a histogram's mean over the last interval, when it observed anything
  kRatePerSecond,   // a counter's increase per second over the last interval
  kAgeOfTimestamp,  // now minus a Unix-time gauge
};

struct SeriesSpec {
  const char* process;
  const char* series;
  const char* metric;
  Reading reading;
  const char* unit;
  const char* description;
};

// What the charts show, per process (docs/metrics.md names each metric).
constexpr SeriesSpec kSeries[] = {
    {"replicate", "a_commit_duration_seconds", "binberg_replicate_commit_duration_seconds", Reading::kHistogramMean,
     "s", "path A: time to write and commit a snapshot (mean per 500 ms)"},
    {"replicate", "a_pending_events", "binberg_replicate_pending_events", Reading::kGauge, "events",
     "path A: row events read and not yet committed"},
    {"replicate", "a_freshness_seconds", "binberg_replicate_committed_source_timestamp_seconds",
     Reading::kAgeOfTimestamp, "s", "path A: age of the newest source commit the tables hold"},
    {"replicate", "a_backpressure", "binberg_replicate_backpressure_seconds_total", Reading::kRatePerSecond, "s/s",
     "path A: share of time the binlog reader waited for the applier"},
    {"source", "b_source_lag_seconds", "binberg_source_lag_seconds", Reading::kGauge, "s",
     "path B: source commit of the transaction being read to its reading"},
    {"source", "b_source_save_duration_seconds", "binberg_source_save_duration_seconds", Reading::kHistogramMean, "s",
     "path B: time a Kafka transaction (records and saved position) takes to commit (mean per 500 ms)"},
    {"sink", "b_sink_lag_records", "binberg_sink_lag_records", Reading::kGauge, "records",
     "path B: records in the topics the tables have not committed"},
    {"sink", "b_sink_lag_seconds", "binberg_sink_lag_seconds", Reading::kLargest, "s",
     "path B: the partition furthest behind, in seconds"},
};

}  // namespace

MetricSampler::MetricSampler(std::vector<std::string> processes,
                             std::function<std::filesystem::path(const std::string&)> log_of,
                             std::chrono::milliseconds interval)
    : processes_(std::move(processes)), log_of_(std::move(log_of)), interval_(interval) {
  thread_ = std::thread([this] { run(); });
}

MetricSampler::~MetricSampler() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void MetricSampler::run() {
  std::map<std::string, MetricsAddress> addresses;
  for (const std::string& process : processes_) addresses.emplace(process, MetricsAddress(log_of_(process)));
  while (!stop_) {
    const auto next = std::chrono::steady_clock::now() + interval_;
    for (auto& [process, address] : addresses) {
      const std::string& url = address.latest();
      if (url.empty()) continue;
      if (const auto exposition = metrics::scrape(url, std::chrono::milliseconds(400))) {
        try {
          sample(process, *exposition, unix_ms());
        } catch (const std::exception& error) {  // a malformed line: the chart has a gap, the drill goes on
          spdlog::warn("drill: metrics of {} at {} not read: {}", process, url, error.what());
        }
      }
    }
    std::this_thread::sleep_until(next);
  }
}

void MetricSampler::sample(const std::string& process, const std::string& exposition, std::int64_t now_ms) {
  for (const SeriesSpec& spec : kSeries) {
    if (spec.process != process) continue;
    const std::string metric = spec.metric;
    switch (spec.reading) {
      case Reading::kGauge:
        if (metrics::sample_count(exposition, metric) > 0)
          add(spec.series, now_ms, metrics::sample_sum(exposition, metric));
        break;
      case Reading::kLargest:
        if (const auto largest = metrics::sample_max(exposition, metric)) add(spec.series, now_ms, *largest);
        break;
      case Reading::kHistogramMean:
        add_histogram_mean(spec.series, exposition, metric, now_ms);
        break;
      case Reading::kRatePerSecond:
        add_rate(spec.series, exposition, metric, now_ms);
        break;
      case Reading::kAgeOfTimestamp:
        if (const double at = metrics::sample_sum(exposition, metric); at > 0) {
          add(spec.series, now_ms, static_cast<double>(now_ms) / 1000 - at);
        }
        break;
    }
  }
}

void MetricSampler::add(const std::string& series, std::int64_t at_ms, double value) {
  points_[series].emplace_back(at_ms, value);
}

void MetricSampler::add_histogram_mean(const std::string& series, const std::string& exposition,
                                       const std::string& metric, std::int64_t now_ms) {
  const double sum = metrics::sample_sum(exposition, metric + "_sum");
  const double count = metrics::sample_sum(exposition, metric + "_count");
  Previous& previous = previous_[series];
  // A restarted process starts its counters again from zero: that interval is not a sample.
  if (count > previous.count && previous.at_ms > 0) {
    add(series, now_ms, (sum - previous.sum) / (count - previous.count));
  }
  previous = Previous{sum, count, now_ms};
}

void MetricSampler::add_rate(const std::string& series, const std::string& exposition, const std::string& metric,
                             std::int64_t now_ms) {
  const double total = metrics::sample_sum(exposition, metric);
  Previous& previous = previous_[series];
  if (previous.at_ms > 0 && total >= previous.sum && now_ms > previous.at_ms) {
    add(series, now_ms, (total - previous.sum) * 1000 / static_cast<double>(now_ms - previous.at_ms));
  }
  previous = Previous{total, 0, now_ms};
}

void MetricSampler::finish(evidence::RunRecord& record) {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  for (const SeriesSpec& spec : kSeries) {
    auto points = points_.find(spec.series);
    if (points == points_.end() || points->second.empty()) continue;
    evidence::Series& series = record.samples[spec.series];
    series.unit = spec.unit;
    series.description = spec.description;
    series.points = std::move(points->second);
  }
  points_.clear();
}

}  // namespace binberg::drill
