#pragma once

// Reading a binberg process's Prometheus /metrics in tests (metrics/scrape.h).

#include <gtest/gtest.h>

#include <string>

#include "metrics/scrape.h"

namespace binberg::testing {

// The exposition text served at URL ("http://host:port/metrics"); fails the test when none comes.
inline std::string scrape_metrics(const std::string& url) {
  const auto body = metrics::scrape(url);
  EXPECT_TRUE(body) << url;
  return body.value_or("");
}

using metrics::sample_count;
using metrics::sample_sum;

}  // namespace binberg::testing
