#pragma once

// Wall-clock time as the formats binberg writes need it (Iceberg timestamps, metrics, logs).

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>

namespace binberg {

inline std::int64_t unix_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline std::int64_t unix_millis() { return unix_micros() / 1000; }

// MS since the epoch as "YYYY-MM-DDTHH:MM:SS.mmmZ".
inline std::string utc_time(std::int64_t ms) {
  const std::time_t seconds = ms / 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

}  // namespace binberg
