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

// The metrics URL a binberg process logged ("metrics on http://..."), past byte FROM of LOG.
std::optional<std::string> metrics_url(const std::filesystem::path& log, std::uintmax_t from = 0);

}  // namespace binberg::drill
