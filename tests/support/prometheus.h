#pragma once

// Reading a binberg process's Prometheus /metrics in tests.

#include <gtest/gtest.h>
#include <httplib.h>

#include <sstream>
#include <string>
#include <vector>

namespace binberg::testing {

// The exposition text served at URL ("http://host:port/metrics"); fails the test when none comes.
inline std::string scrape_metrics(const std::string& url) {
  const auto slash = url.find('/', 7);
  const auto response = httplib::Client(url.substr(0, slash)).Get(url.substr(slash));
  EXPECT_TRUE(response) << url;
  if (!response) return "";
  EXPECT_EQ(response->status, 200) << url;
  return response->body;
}

// The sum of the samples of metric NAME whose lines hold every one of LABELS (e.g. `op="delete"`).
inline double sample_sum(const std::string& exposition, const std::string& name,
                         const std::vector<std::string>& labels = {}) {
  double sum = 0;
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::string metric = line.substr(0, line.find_first_of("{ "));
    if (metric != name) continue;
    bool matches = true;
    for (const std::string& label : labels) matches = matches && line.find(label) != std::string::npos;
    if (matches) sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

// How many samples of metric NAME the exposition holds.
inline std::size_t sample_count(const std::string& exposition, const std::string& name) {
  std::size_t count = 0;
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#' && line.substr(0, line.find_first_of("{ ")) == name) ++count;
  }
  return count;
}

}  // namespace binberg::testing
