#include "capture/source_position.h"

#include <fmt/format.h>

#include <charconv>

#include "core/error.h"

namespace binberg::capture {
namespace {

// "mysql-bin.000012" -> 12; names without a numeric suffix compare as text after all numbered ones.
std::optional<std::uint64_t> file_number(const std::string& file) {
  const auto dot = file.rfind('.');
  if (dot == std::string::npos || dot + 1 == file.size()) return std::nullopt;
  std::uint64_t number = 0;
  const char* end = file.data() + file.size();
  const auto [ptr, ec] = std::from_chars(file.data() + dot + 1, end, number);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return number;
}

}  // namespace

std::strong_ordering compare_binlog(const mysql::BinlogPosition& a, const mysql::BinlogPosition& b) {
  if (a.file != b.file) {
    const auto na = file_number(a.file);
    const auto nb = file_number(b.file);
    if (na && nb && *na != *nb) return *na <=> *nb;
    return a.file <=> b.file;
  }
  return a.offset <=> b.offset;
}

bool SourcePosition::contains(const std::string& file, std::uint64_t end_pos) const {
  return compare_binlog(mysql::BinlogPosition{file, end_pos}, binlog) <= 0;
}

std::map<std::string, std::string> SourcePosition::to_summary() const {
  return {{tables::kBinlogFileProperty, binlog.file},
          {tables::kBinlogPosProperty, std::to_string(binlog.offset)},
          {tables::kGtidProperty, gtid.to_string()}};
}

std::optional<SourcePosition> SourcePosition::from_summary(const std::map<std::string, std::string>& summary) {
  const auto file = summary.find(tables::kBinlogFileProperty);
  const auto pos = summary.find(tables::kBinlogPosProperty);
  if (file == summary.end() && pos == summary.end()) return std::nullopt;
  if (file == summary.end() || pos == summary.end() || file->second.empty()) {
    fail("snapshot summary: {} and {} must both be set", tables::kBinlogFileProperty, tables::kBinlogPosProperty);
  }
  SourcePosition position;
  position.binlog.file = file->second;
  const char* end = pos->second.data() + pos->second.size();
  const auto [ptr, ec] = std::from_chars(pos->second.data(), end, position.binlog.offset);
  if (ec != std::errc() || ptr != end)
    fail("snapshot summary: {} '{}' is not an offset", tables::kBinlogPosProperty, pos->second);
  if (const auto gtid = summary.find(tables::kGtidProperty); gtid != summary.end()) {
    position.gtid = mysql::GtidPosition::parse(gtid->second);
  }
  return position;
}

std::string SourcePosition::to_string() const {
  return gtid.empty() ? binlog.to_string() : fmt::format("{} (gtid {})", binlog.to_string(), gtid.to_string());
}

}  // namespace binberg::capture
