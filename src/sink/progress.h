#pragma once

// What a sink's tables hold of their topics, as plain values (no I/O): the partition, offset and
// writer-epoch types, a change's coordinates in the source history, and a partition's progress
// with the JSON every snapshot records (kSinkOffsetsProperty). The JSON is read by every sink and
// rebuild of a table, so its form never changes: tables written before stay readable.

#include <fmt/format.h>

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "mysql/binlog_stream.h"

namespace binberg::sink {

// A partition of a topic, an offset in one, a table's writer epoch: constructed explicitly, so none
// is passed where another is meant (the JSON and the summaries hold the plain numbers).
struct Partition {
  std::int32_t value = 0;
  constexpr Partition() = default;
  constexpr explicit Partition(std::int32_t number) : value(number) {}
  auto operator<=>(const Partition&) const = default;
};

struct Offset {
  std::int64_t value = 0;
  constexpr Offset() = default;
  constexpr explicit Offset(std::int64_t number) : value(number) {}
  constexpr Offset next() const { return Offset(value + 1); }
  auto operator<=>(const Offset&) const = default;
};

// Invariant 8 (kafka_sink.h): a table's epochs only grow; a sink claims a table at the next one.
struct Epoch {
  std::int64_t value = 0;
  constexpr Epoch() = default;
  constexpr explicit Epoch(std::int64_t number) : value(number) {}
  constexpr Epoch next() const { return Epoch(value + 1); }
  auto operator<=>(const Epoch&) const = default;
  // TEXT as kSinkWriterEpochProperty records it; throws Error naming TABLE.
  static Epoch parse(const std::string& text, const std::string& table);
};

// "<file>:<pos>" (BinlogPosition::to_string); nullopt for anything else.
std::optional<mysql::BinlogPosition> parse_binlog_position(std::string_view text);

// A change's place in the source history. Within a partition the records of `binberg source` are
// in this order, so a record that is not after the partition's last applied one was applied.
struct Coordinates {
  mysql::BinlogPosition binlog;
  std::uint32_t row = 0;
  int part = 0;  // 1 for the new-key half of a primary-key update (it follows the old-key half)

  std::string to_string() const;  // "<file>:<pos>#<row>[/new]"
  static Coordinates parse(const std::string& text);
};

std::strong_ordering compare(const Coordinates& a, const Coordinates& b);

// What a table has applied of one partition of its topic.
struct Progress {
  Offset next_offset;
  std::optional<Coordinates> last;
  // The transaction and source position of the last record counted (applied or diverted); empty in
  // tables written before they were recorded.
  std::string last_txn;
  std::optional<mysql::BinlogPosition> last_txn_position;
  std::int64_t timestamp_ms = 0;  // of the record before next_offset, when read here (not recorded)
};

using PartitionProgress = std::map<Partition, Progress>;

// The kSinkOffsetsProperty JSON of PARTITIONS, and back (throws Error naming WHERE).
std::string progress_json(const PartitionProgress& partitions);
PartitionProgress parse_progress(const std::string& text, const std::string& where);

// Offsets by partition, e.g. where a rebuild stops; as JSON for messages ([[0,12],...]).
using PartitionOffsets = std::map<Partition, Offset>;
std::string offsets_json(const PartitionOffsets& offsets);

// The next offset per partition a kSinkOffsetsProperty (SUMMARY_VALUE) records; throws Error naming WHERE.
PartitionOffsets sink_next_offsets(const std::string& summary_value, const std::string& where);

// The offsets a partition holds now: [first, end). `first` moves up as retention deletes records.
struct PartitionBounds {
  Offset first, end;
};

// Offsets a table needs from a partition that the partition no longer holds (invariant 5 of
// kafka_sink.h): applying what comes after them would commit past records never applied.
struct OffsetGap {
  enum class Kind {
    kDeleted,    // retention (or a truncation) deleted [from, to) before the table applied them
    kRecreated,  // the partition ends below what the table applied: the topic was deleted and made again
  };
  Kind kind = Kind::kDeleted;
  Offset from, to;  // kDeleted: the records lost; kRecreated: [the partition's end, the table's next offset)

  // The error naming TOPIC, PARTITION, the missing range and what to do.
  std::string describe(const std::string& topic, Partition partition) const;
};

// Where a table whose next offset is NEEDED starts reading a partition holding BOUNDS: a gap when
// retention deleted records it needs (a table with no progress needs the partition from offset 0)
// or the partition ends below NEEDED (only a recreated topic ends below offsets once applied).
std::optional<OffsetGap> gap_at_start(Offset needed, PartitionBounds bounds);
// A record delivered at DELIVERED where the partition's next record was EXPECTED, the partition
// holding from FIRST on, its table needing it from NEEDED on. A read_committed consumer
// legitimately skips transaction markers and aborted records, so a skip alone is no gap; it is one
// when FIRST is past what the table needs: the records in between were deleted before they were
// applied. Records below NEEDED are in the table already: a re-read (a rewind, `--from earliest`)
// that finds them deleted misses nothing.
std::optional<OffsetGap> gap_in_delivery(Offset expected, Offset needed, Offset delivered, Offset first);

}  // namespace binberg::sink

template <>
struct fmt::formatter<binberg::sink::Partition> : fmt::formatter<std::int32_t> {
  auto format(binberg::sink::Partition partition, format_context& context) const {
    return fmt::formatter<std::int32_t>::format(partition.value, context);
  }
};
template <>
struct fmt::formatter<binberg::sink::Offset> : fmt::formatter<std::int64_t> {
  auto format(binberg::sink::Offset offset, format_context& context) const {
    return fmt::formatter<std::int64_t>::format(offset.value, context);
  }
};
template <>
struct fmt::formatter<binberg::sink::Epoch> : fmt::formatter<std::int64_t> {
  auto format(binberg::sink::Epoch epoch, format_context& context) const {
    return fmt::formatter<std::int64_t>::format(epoch.value, context);
  }
};
