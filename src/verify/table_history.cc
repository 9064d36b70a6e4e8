#include "verify/table_history.h"

#include "core/error.h"
#include "mysql/transaction_reader.h"
#include "tables/snapshot_properties.h"

namespace binberg::verify {

std::optional<capture::SourcePosition> position_of(const iceberg::Snapshot& snapshot) {
  return capture::SourcePosition::from_summary(snapshot.summary);
}

bool written_by_sink(const iceberg::LoadedTable& table) {
  return table.metadata.properties.contains(tables::kSinkTopicProperty);
}

const iceberg::Snapshot* snapshot_at_or_before(const iceberg::LoadedTable& table, const capture::SourcePosition& p) {
  for (const iceberg::Snapshot* snapshot = table.metadata.current_snapshot(); snapshot != nullptr;
       snapshot = snapshot->parent_snapshot_id ? table.metadata.find_snapshot(*snapshot->parent_snapshot_id)
                                               : nullptr) {
    const auto position = position_of(*snapshot);
    if (!position && written_by_sink(table)) {
      // The sink is between two points it can claim: wait for the next rather than compare its last.
      if (snapshot == table.metadata.current_snapshot()) return nullptr;
      continue;
    }
    if (!position)
      fail("table {}: snapshot {} records no source position", table.id.to_string(), snapshot->snapshot_id);
    if (capture::compare_binlog(position->binlog, p.binlog) <= 0) return snapshot;
  }
  return nullptr;
}

void read_binlog(const BinlogAccess& access, const mysql::BinlogPosition& from, const mysql::BinlogPosition& until,
                 const std::function<bool(const SourceTransaction&)>& visit) {
  if (capture::compare_binlog(from, until) >= 0) return;
  mysql::StreamOptions stream;
  stream.connection = access.source;
  stream.server_id = access.server_id;
  stream.start_position = from;
  stream.blocking = false;
  mysql::TransactionReader reader(stream, access.charsets);
  while (auto txn = reader.next()) {
    if (capture::compare_binlog(mysql::BinlogPosition{txn->file, txn->end_pos}, until) > 0) return;
    if (!visit(*txn)) return;
  }
}

}  // namespace binberg::verify
