#include "drill/signals.h"

#include <gtest/gtest.h>

#include <ctime>
#include <fstream>

#include "support/temp_dir.h"

namespace binberg::drill {
namespace {

std::int64_t local_ms(int year, int month, int day, int hour, int minute, int second, int millis) {
  std::tm parts{};
  parts.tm_year = year - 1900;
  parts.tm_mon = month - 1;
  parts.tm_mday = day;
  parts.tm_hour = hour;
  parts.tm_min = minute;
  parts.tm_sec = second;
  parts.tm_isdst = -1;
  return static_cast<std::int64_t>(std::mktime(&parts)) * 1000 + millis;
}

TEST(SignalsTest, ALogLineIsTimedByItsOwnTimestampNotByWhenItIsRead) {
  binberg::testing::TempDir dir;
  const auto log = dir.path() / "replicate.log";
  std::ofstream(log) << "[2026-12-07 03:00:01.250] [info] starting\n"
                     << "[2026-12-07 03:00:02.125] [warning] binlog source: lost; reconnecting in 100 ms\n"
                     << "[2026-12-07 03:00:09.500] [warning] binlog source: lost; reconnecting in 200 ms\n";
  EXPECT_EQ(log_line_time(log, "reconnecting in"), local_ms(2026, 12, 7, 3, 0, 2, 125));
  EXPECT_FALSE(log_line_time(log, "committed").has_value());
}

TEST(SignalsTest, OnlyLinesWrittenAfterAPointCount) {
  binberg::testing::TempDir dir;
  const auto log = dir.path() / "replicate.log";
  std::ofstream(log) << "[2026-12-07 03:00:02.125] [info] failpoint X fired\n";
  const std::uintmax_t from = log_size(log);
  EXPECT_FALSE(log_line_time(log, "failpoint X fired", from).has_value());
  std::ofstream(log, std::ios::app) << "[2026-12-07 03:00:04.000] [info] failpoint X fired\n";
  EXPECT_EQ(log_line_time(log, "failpoint X fired", from), local_ms(2026, 12, 7, 3, 0, 4, 0));
  EXPECT_EQ(log_size(dir.path() / "missing.log"), 0u);
}

TEST(SignalsTest, TheMetricsUrlIsTheNewestTheProcessLogged) {
  binberg::testing::TempDir dir;
  const auto log = dir.path() / "sink.log";
  MetricsAddress address(log);
  EXPECT_EQ(address.latest(), "");
  std::ofstream(log) << "[2026-12-07 03:00:01.250] [info] metrics on http://127.0.0.1:40123/metrics\n";
  EXPECT_EQ(address.latest(), "http://127.0.0.1:40123/metrics");
  std::ofstream(log, std::ios::app) << "[2026-12-07 03:00:02.000] [info] sink: restarted\n"
                                    << "[2026-12-07 03:00:02.250] [info] metrics on http://127.0.0.1:40999/metrics\n"
                                    << "[2026-12-07 03:00:02.300] [info] a line still being wri";
  EXPECT_EQ(address.latest(), "http://127.0.0.1:40999/metrics") << "a restarted process's new address";
}

}  // namespace
}  // namespace binberg::drill
