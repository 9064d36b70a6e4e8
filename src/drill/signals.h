#pragma once

// Reading when something happened from the system's own signals: the timestamp a binberg process
// wrote on a log line (spdlog's "[YYYY-mm-dd HH:MM:SS.mmm]", local time), and samples of the
// metrics it serves.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace binberg::drill {

// The time of the first line of LOG past byte FROM holding TEXT, from its own timestamp; nullopt when
// there is none (yet).
std::optional<std::int64_t> log_line_time(const std::filesystem::path& log, const std::string& text,
                                          std::uintmax_t from = 0);

// The size of LOG now (0 when missing): where lines written after this moment begin.
std::uintmax_t log_size(const std::filesystem::path& log);

struct LogLine {
  std::int64_t at_ms = 0;  // its own timestamp
  std::string text;
};

// The first line of LOG past byte FROM holding TEXT, with a timestamp; nullopt when there is none (yet).
std::optional<LogLine> find_log_line(const std::filesystem::path& log, const std::string& text,
                                     std::uintmax_t from = 0);

// The newest /metrics address a binberg process logged ("metrics on http://..."): a restarted
// process listens on a new port. Reads only what the log gained since the last call.
class MetricsAddress {
 public:
  explicit MetricsAddress(std::filesystem::path log) : log_(std::move(log)) {}
  // "" until the process logged one.
  const std::string& latest();

 private:
  std::filesystem::path log_;
  std::uintmax_t read_ = 0;  // bytes of whole lines read so far
  std::string url_;
};

}  // namespace binberg::drill
