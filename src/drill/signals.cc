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

std::optional<std::int64_t> log_line_time(const std::filesystem::path& log, const std::string& text,
                                          std::uintmax_t from) {
  std::optional<std::int64_t> at;
  visit_lines(log, from, [&](const std::string& line) {
    if (line.find(text) == std::string::npos) return false;
    at = line_timestamp(line);
    return at.has_value();
  });
  return at;
}

std::uintmax_t log_size(const std::filesystem::path& log) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(log, error);
  return error ? 0 : size;
}

std::optional<std::string> metrics_url(const std::filesystem::path& log, std::uintmax_t from) {
  std::optional<std::string> url;
  visit_lines(log, from, [&](const std::string& line) {
    const auto at = line.find("metrics on http://");
    if (at == std::string::npos) return false;
    const std::string rest = line.substr(at + std::string("metrics on ").size());
    url = rest.substr(0, rest.find(' '));
    return true;
  });
  return url;
}

}  // namespace binberg::drill
