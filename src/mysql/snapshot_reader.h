#pragma once

// Initial snapshot of tables without global locks: one REPEATABLE READ transaction started WITH
// CONSISTENT SNAPSHOT, whose binlog position MariaDB reports, so streaming from exactly that
// position sees every later change once and no earlier one. Rows come in primary-key order, in
// chunks of bounded size (memory independent of table size), typed like the row decoder's.
// Several tables read in one such transaction are copies of one instant: a source transaction
// that touched two of them is in both copies or in neither.

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
// The same, or null when the server has no such table.
std::shared_ptr<const TableSchema> find_table_schema(Connection& connection, const std::string& database,
                                                     const std::string& table);

struct TableName {
  std::string database, table;
};

class TableSnapshot {
 public:
  // One consistent snapshot of TABLES, read one table after the other.
  static TableSnapshot open(const ConnectionOptions& options, const std::vector<TableName>& tables,
                            std::size_t chunk_rows = 10000);
  static TableSnapshot open(const ConnectionOptions& options, const std::string& database, const std::string& table,
                            std::size_t chunk_rows = 10000) {
    return open(options, {TableName{database, table}}, chunk_rows);
  }

  const SnapshotPosition& position() const { return position_; }
  // The schemas of the tables, in the order given to open().
  const std::vector<std::shared_ptr<const TableSchema>>& schemas() const { return schemas_; }
  const std::shared_ptr<const TableSchema>& schema() const { return schemas_.front(); }
  std::uint64_t rows_read() const { return rows_read_; }  // over all tables

  // The next chunk of the table being read, as op 'r' events (each carries its table's schema);
  // empty once every row of every table was read (the transaction then ends).
  std::vector<ChangeEvent> next_chunk();

 private:
  TableSnapshot(Connection connection, std::size_t chunk_rows)
      : connection_(std::move(connection)), chunk_rows_(chunk_rows) {}
  std::string chunk_query(const TableSchema& schema);
  void next_table();

  Connection connection_;
  std::size_t chunk_rows_;
  SnapshotPosition position_;
  std::vector<std::shared_ptr<const TableSchema>> schemas_;
  std::size_t current_ = 0;            // the table being read
  std::optional<RowImage> last_key_;   // of the current table's last chunk
  std::uint64_t table_rows_read_ = 0;  // of the current table
  std::uint64_t rows_read_ = 0;
};

}  // namespace binberg::mysql
