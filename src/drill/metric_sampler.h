#pragma once

// Samples the metrics of a drill's binberg processes while it runs, for the record's charts:
// commit durations, lag in events, records and seconds, freshness and backpressure, every 500 ms.
// Each process's /metrics address is read from the latest "metrics on <url>" line of its log (a
// restarted process listens on a new port); a process that is down is simply not sampled, so the
// gaps in a series are the outages. The sampler reads logs and scrapes HTTP on a thread of its own
// and touches the run record only in finish(), on the drill's thread.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "evidence/run_record.h"

namespace binberg::drill {

class MetricSampler {
 public:
  // Samples PROCESSES (by name: "replicate", "source", "sink"), whose logs are LOG_OF(name).
  MetricSampler(std::vector<std::string> processes, std::function<std::filesystem::path(const std::string&)> log_of,
                std::chrono::milliseconds interval = std::chrono::milliseconds(500));
  ~MetricSampler();
  MetricSampler(const MetricSampler&) = delete;
  MetricSampler& operator=(const MetricSampler&) = delete;

  // Stops sampling and adds every series that has points to RECORD's samples.
  void finish(evidence::RunRecord& record);

 private:
  // The counters of a histogram or a counter at the previous sample, per process and metric.
  struct Previous {
    double sum = 0, count = 0;
    std::int64_t at_ms = 0;
  };

  void run();
  void sample(const std::string& process, const std::string& exposition, std::int64_t now_ms);
  void add(const std::string& series, std::int64_t at_ms, double value);
  // The mean of histogram METRIC over the last interval, when it observed anything.
  void add_histogram_mean(const std::string& series, const std::string& exposition, const std::string& metric,
                          std::int64_t now_ms);
  // Counter METRIC's increase per second over the last interval.
  void add_rate(const std::string& series, const std::string& exposition, const std::string& metric,
                std::int64_t now_ms);

  std::vector<std::string> processes_;
  std::function<std::filesystem::path(const std::string&)> log_of_;
  std::chrono::milliseconds interval_;
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> points_;
  std::map<std::string, Previous> previous_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace binberg::drill
