#pragma once

// Reading a Prometheus text exposition (what binberg's /metrics serves): the drills sample their
// processes with it, and tests check counters against what a workload wrote.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace binberg::metrics {

// The exposition served at URL ("http://host:port/metrics"); nullopt when nothing answers within
// TIMEOUT or the answer is not 200 (a process that is down or restarting).
std::optional<std::string> scrape(const std::string& url,
                                  std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

// The sum of the samples of metric NAME whose lines hold every one of LABELS (e.g. `op="delete"`).
double sample_sum(const std::string& exposition, const std::string& name, const std::vector<std::string>& labels = {});

// The largest sample of metric NAME; nullopt when the exposition has none.
std::optional<double> sample_max(const std::string& exposition, const std::string& name);

// How many samples of metric NAME the exposition holds.
std::size_t sample_count(const std::string& exposition, const std::string& name);

}  // namespace binberg::metrics
