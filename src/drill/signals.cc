#include "drill/signals.h"

#include <ctime>
#include <fstream>

namespace binberg::drill {
namespace {

// Lines of LOG past FROM; VISIT returns true to stop.
template <typename Visit>
void visit_lines(const std::filesystem::path& log, std::uintmax_t from, Visit visit) {
  std::ifstream in(log);
  if (!in) return;
  in.seekg(static_cast<std::streamoff>(from));
  std::string line;
  while (std::getline(in, line)) {
    if (visit(line)) return;
  }
}

std::optional<std::int64_t> line_timestamp(const std::string& line) {
  std::tm parts{};
  int year = 0, month = 0, millis = 0;
  if (std::sscanf(line.c_str(), "[%d-%d-%d %d:%d:%d.%d]", &year, &month, &parts.tm_mday, &parts.tm_hour, &parts.tm_min,
                  &parts.tm_sec, &millis) != 7) {
    return std::nullopt;
  }
  parts.tm_year = year - 1900;
  parts.tm_mon = month - 1;
  parts.tm_isdst = -1;
  const std::time_t seconds = std::mktime(&parts);
  if (seconds < 0) return std::nullopt;
  return static_cast<std::int64_t>(seconds) * 1000 + millis;
}

}  // namespace

std::optional<LogLine> find_log_line(const std::filesystem::path& log, const std::string& text, std::uintmax_t from) {
  std::optional<LogLine> found;
  visit_lines(log, from, [&](const std::string& line) {
    if (line.find(text) == std::string::npos) return false;
    if (const auto at = line_timestamp(line)) found = LogLine{*at, line};
    return found.has_value();
  });
  return found;
}

std::optional<std::int64_t> log_line_time(const std::filesystem::path& log, const std::string& text,
                                          std::uintmax_t from) {
  const std::optional<LogLine> line = find_log_line(log, text, from);
  return line ? std::optional(line->at_ms) : std::nullopt;
}

std::uintmax_t log_size(const std::filesystem::path& log) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(log, error);
  return error ? 0 : size;
}

const std::string& MetricsAddress::latest() {
  std::ifstream in(log_);
  if (!in) return url_;
  in.seekg(static_cast<std::streamoff>(read_));
  constexpr std::string_view kMarker = "metrics on ";
  for (std::string line; std::getline(in, line);) {
    if (in.eof()) break;  // a line still being written: read it whole next time
    read_ += line.size() + 1;
    const auto at = line.find(kMarker);
    if (at == std::string::npos) continue;
    const std::string rest = line.substr(at + kMarker.size());
    url_ = rest.substr(0, rest.find(' '));
  }
  return url_;
}

}  // namespace binberg::drill
