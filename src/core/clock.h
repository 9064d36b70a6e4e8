#pragma once

// Wall-clock time as the formats binberg writes need it (Iceberg timestamps, metrics, logs), and
// the time a pipeline runs on (TimeSource): the system's, or a simulation's.

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>
#include <thread>

namespace binberg {

inline std::int64_t unix_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline std::int64_t unix_millis() { return unix_micros() / 1000; }

// The clocks a pipeline reads and sleeps on, injected so that a deterministic simulation
// (tests/support/simulation.h) can move time itself.
class TimeSource {
 public:
  virtual ~TimeSource() = default;
  virtual std::chrono::steady_clock::time_point now() = 0;
  virtual std::int64_t unix_millis() = 0;  // commit ids, snapshot times, lag
  virtual void sleep_for(std::chrono::milliseconds duration) = 0;
};

// The system's clocks.
class SystemTime final : public TimeSource {
 public:
  std::chrono::steady_clock::time_point now() override { return std::chrono::steady_clock::now(); }
  std::int64_t unix_millis() override { return binberg::unix_millis(); }
  void sleep_for(std::chrono::milliseconds duration) override { std::this_thread::sleep_for(duration); }
};

inline TimeSource& system_time() {
  static SystemTime time;
  return time;
}

// MS since the epoch as "YYYY-MM-DDTHH:MM:SS.mmmZ".
inline std::string utc_time(std::int64_t ms) {
  const std::time_t seconds = ms / 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

}  // namespace binberg
