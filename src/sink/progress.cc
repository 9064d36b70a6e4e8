#include "sink/progress.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "capture/source_position.h"
#include "core/error.h"
#include "tables/snapshot_properties.h"

namespace binberg::sink {

Epoch Epoch::parse(const std::string& text, const std::string& table) {
  try {
    return Epoch(std::stoll(text));
  } catch (const std::exception&) {
    fail("table {}: {} '{}' is not a number", table, tables::kSinkWriterEpochProperty, text);
  }
}

std::optional<mysql::BinlogPosition> parse_binlog_position(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  mysql::BinlogPosition position{std::string(text.substr(0, colon)), 0};
  const auto digits = text.substr(colon + 1);
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), position.offset);
  if (error != std::errc() || end != digits.data() + digits.size() || digits.empty()) return std::nullopt;
  return position;
}

std::string Coordinates::to_string() const {
  return fmt::format("{}#{}{}", binlog.to_string(), row, part == 1 ? "/new" : "");
}

Coordinates Coordinates::parse(const std::string& text) {
  const auto hash = text.rfind('#');
  const auto binlog = hash == std::string::npos ? std::nullopt : parse_binlog_position(text.substr(0, hash));
  if (!binlog) fail("'{}' is not <file>:<pos>#<row>", text);
  Coordinates coordinates;
  coordinates.binlog = *binlog;
  std::string row = text.substr(hash + 1);
  if (row.ends_with("/new")) {
    coordinates.part = 1;
    row.resize(row.size() - 4);
  }
  coordinates.row = static_cast<std::uint32_t>(std::stoul(row));
  return coordinates;
}

std::strong_ordering compare(const Coordinates& a, const Coordinates& b) {
  if (auto order = capture::compare_binlog(a.binlog, b.binlog); order != 0) return order;
  if (a.row != b.row) return a.row <=> b.row;
  return a.part <=> b.part;
}

std::string progress_json(const PartitionProgress& partitions) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [partition, progress] : partitions) {
    nlohmann::json entry{{"next_offset", progress.next_offset.value}};
    if (progress.last) entry["last"] = progress.last->to_string();
    if (!progress.last_txn.empty()) entry["last_txn"] = progress.last_txn;
    if (progress.last_txn_position) entry["last_txn_position"] = progress.last_txn_position->to_string();
    json[std::to_string(partition.value)] = entry;
  }
  return json.dump();
}

PartitionProgress parse_progress(const std::string& text, const std::string& where) {
  PartitionProgress partitions;
  try {
    const nlohmann::json json = nlohmann::json::parse(text);
    for (const auto& [partition, entry] : json.items()) {
      Progress progress;
      progress.next_offset = Offset(entry.at("next_offset").get<std::int64_t>());
      if (entry.contains("last")) progress.last = Coordinates::parse(entry["last"].get<std::string>());
      if (entry.contains("last_txn")) progress.last_txn = entry["last_txn"].get<std::string>();
      if (entry.contains("last_txn_position")) {
        progress.last_txn_position = parse_binlog_position(entry["last_txn_position"].get<std::string>());
        if (!progress.last_txn_position) fail("partition {}: last_txn_position is not <file>:<pos>", partition);
      }
      partitions.emplace(Partition(std::stoi(partition)), progress);
    }
  } catch (const std::exception& error) {
    fail("{}: {} is unreadable: {}", where, tables::kSinkOffsetsProperty, error.what());
  }
  return partitions;
}

std::string offsets_json(const PartitionOffsets& offsets) {
  std::map<std::int32_t, std::int64_t> numbers;  // as the logs always showed them: [[partition,offset],...]
  for (const auto& [partition, offset] : offsets) numbers.emplace(partition.value, offset.value);
  return nlohmann::json(numbers).dump();
}

PartitionOffsets sink_next_offsets(const std::string& summary_value, const std::string& where) {
  PartitionOffsets offsets;
  for (const auto& [partition, progress] : parse_progress(summary_value, where)) {
    offsets[partition] = progress.next_offset;
  }
  return offsets;
}

std::string OffsetGap::describe(const std::string& topic, Partition partition) const {
  if (kind == Kind::kRecreated) {
    return fmt::format(
        "topic {} [{}] ends at offset {} but the tables applied it up to offset {}: the topic was deleted and made "
        "again (or truncated). Its records below offset {} are not the ones the tables applied and would be skipped "
        "as applied: binberg sink stops writing this table and commits nothing more of it; the other tables go on. "
        "Reload the table (rebuild it or start it afresh from the new topic)",
        topic, partition, from, to, to);
  }
  return fmt::format(
      "topic {} [{}]: offsets {}..{} were deleted (retention) before the tables applied them; the tables need the "
      "partition from offset {} and it now starts at offset {}: binberg sink stops writing this table and commits "
      "nothing past offset {}; the other tables go on. Rebuild the table from a later commit (binberg sink "
      "--rebuild NAMESPACE --from timestamp:...) or reload the source",
      topic, partition, from, to.value - 1, from, to, from);
}

std::optional<OffsetGap> gap_at_start(Offset needed, PartitionBounds bounds) {
  if (bounds.end < needed) return OffsetGap{OffsetGap::Kind::kRecreated, bounds.end, needed};
  if (bounds.first > needed) return OffsetGap{OffsetGap::Kind::kDeleted, needed, bounds.first};
  return std::nullopt;
}

std::optional<OffsetGap> gap_in_delivery(Offset expected, Offset needed, Offset delivered, Offset first) {
  const Offset from = std::max(expected, needed);
  if (delivered <= from || first <= from) return std::nullopt;
  return OffsetGap{OffsetGap::Kind::kDeleted, from, std::min(first, delivered)};
}

}  // namespace binberg::sink
