#pragma once

// What reconcile reads of a table's history: the source positions its snapshots record, and the
// source's binlog between two positions.

#include <cstdint>
#include <functional>
#include <optional>

#include "capture/source_position.h"
#include "core/source_transaction.h"
#include "iceberg/catalog.h"
#include "mysql/charset.h"
#include "mysql/connection.h"

namespace binberg::verify {

std::optional<capture::SourcePosition> position_of(const iceberg::Snapshot& snapshot);

// Whether `binberg sink` writes TABLE: its snapshots claim a source position only when the sink had
// read the table's topic to its end (kafka_sink.h), so the others record none.
bool written_by_sink(const iceberg::LoadedTable& table);

// The latest snapshot of TABLE at or before P (following the parents of the current one); null
// when there is none yet, or a sink's current snapshot claims no position (it is between two).
// Throws Error for a snapshot of a table not written by a sink that records no position.
const iceberg::Snapshot* snapshot_at_or_before(const iceberg::LoadedTable& table, const capture::SourcePosition& p);

// Reads the source's binlog as a replica with its own id.
struct BinlogAccess {
  mysql::ConnectionOptions source;
  std::uint32_t server_id = 0;
  mysql::CharsetNames charsets;
};

// Hands VISIT the whole transactions from FROM on while they end at or before UNTIL; VISIT returns
// false to stop.
void read_binlog(const BinlogAccess& access, const mysql::BinlogPosition& from, const mysql::BinlogPosition& until,
                 const std::function<bool(const SourceTransaction&)>& visit);

}  // namespace binberg::verify
