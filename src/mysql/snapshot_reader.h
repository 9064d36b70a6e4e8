#pragma once

// Initial snapshot of a table without global locks: one REPEATABLE READ transaction started WITH
// CONSISTENT SNAPSHOT, whose binlog position MariaDB reports, so streaming from exactly that
// position sees every later change once and no earlier one. Rows come in primary-key order, in
// chunks of bounded size (memory independent of table size), typed like the row decoder's.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/change_event.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "mysql/gtid.h"

namespace binberg::mysql {

struct SnapshotPosition {
  BinlogPosition binlog;  // stream from here after the snapshot
  GtidPosition gtid;      // the same point as a GTID position
};

// The table's schema from information_schema, in the form TABLE_MAP parsing gives.
std::shared_ptr<const TableSchema> load_table_schema(Connection& connection, const std::string& database,
                                                     const std::string& table);

class TableSnapshot {
 public:
  static TableSnapshot open(const ConnectionOptions& options, const std::string& database, const std::string& table,
                            std::size_t chunk_rows = 10000);

  const SnapshotPosition& position() const { return position_; }
  const std::shared_ptr<const TableSchema>& schema() const { return schema_; }
  std::uint64_t rows_read() const { return rows_read_; }

  // The next chunk as op 'r' events; empty once every row was read (the transaction then ends).
  std::vector<ChangeEvent> next_chunk();

 private:
  TableSnapshot(Connection connection, std::size_t chunk_rows)
      : connection_(std::move(connection)), chunk_rows_(chunk_rows) {}
  std::string chunk_query();

  Connection connection_;
  std::size_t chunk_rows_;
  SnapshotPosition position_;
  std::shared_ptr<const TableSchema> schema_;
  std::optional<RowImage> last_key_;
  std::uint64_t rows_read_ = 0;
  bool done_ = false;
};

}  // namespace binberg::mysql
