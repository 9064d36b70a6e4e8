#pragma once

// Wall-clock time as the formats binberg writes need it (Iceberg timestamps, metrics, logs).

#include <chrono>
#include <cstdint>

namespace binberg {

inline std::int64_t unix_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline std::int64_t unix_millis() { return unix_micros() / 1000; }

}  // namespace binberg
