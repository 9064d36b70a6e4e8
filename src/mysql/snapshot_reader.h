#pragma once

// Initial snapshot of tables without global locks: one REPEATABLE READ transaction started WITH
// CONSISTENT SNAPSHOT, whose binlog position MariaDB reports, so streaming from exactly that
// position sees every later change once and no earlier one. Rows come in chunks of bounded size
// (memory independent of table size), typed like the row decoder's. Several tables read in one
// such transaction are copies of one instant: a source transaction that touched two of them is in
// both copies or in neither.
//
// Invariant: every row the table holds at the snapshot point is handed out exactly once. Each
// table is read by one of two methods (ReadMethod), both inside the transaction:
//   - keyset paging (mysql/keyset_pager.h): a query per chunk for the keys after the last one
//     read, in primary-key order, compared as the server orders the key;
//   - one unbuffered SELECT (Connection::stream), handed out chunk by chunk: no query depends on
//     rows read before, so it needs no order at all (keyless tables, keys the server cannot page
//     consistently, and reconcile's independent reading).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/change_event.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "mysql/gtid.h"
#include "mysql/keyset_pager.h"

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

// How a TableSnapshot reads its tables.
enum class ReadMethod {
  // Keyed tables in primary-key order, a query per chunk starting after the last key read (the
  // boundary a resumed copy can start from); the others as kStreamed.
  kKeysetPaging,
  // Every table in one streamed SELECT, in the server's order: reading that shares nothing with
  // the paging, for reconcile to check the copy against.
  kStreamed,
};

class TableSnapshot {
 public:
  // One consistent snapshot of TABLES, read one table after the other.
  static TableSnapshot open(const ConnectionOptions& options, const std::vector<TableName>& tables,
                            std::size_t chunk_rows = 10000, ReadMethod method = ReadMethod::kKeysetPaging);
  static TableSnapshot open(const ConnectionOptions& options, const std::string& database, const std::string& table,
                            std::size_t chunk_rows = 10000, ReadMethod method = ReadMethod::kKeysetPaging) {
    return open(options, {TableName{database, table}}, chunk_rows, method);
  }

  TableSnapshot(TableSnapshot&&) noexcept = default;
  // Not assignable: assigning would close the connection before the stream read on it ends.
  TableSnapshot& operator=(TableSnapshot&&) = delete;

  const SnapshotPosition& position() const { return position_; }
  // The schemas of the tables, in the order given to open().
  const std::vector<std::shared_ptr<const TableSchema>>& schemas() const { return schemas_; }
  const std::shared_ptr<const TableSchema>& schema() const { return schemas_.front(); }
  std::uint64_t rows_read() const { return rows_read_; }  // over all tables

  // Whether the table at INDEX (in the order given to open()) is read by keyset paging.
  bool paged(std::size_t index) const { return pagers_.at(index).has_value(); }

  // The next chunk of the table being read, as op 'r' events (each carries its table's schema);
  // empty once every row of every table was read (the transaction then ends).
  std::vector<ChangeEvent> next_chunk();

 private:
  TableSnapshot(Connection connection, std::size_t chunk_rows)
      : connection_(std::move(connection)), chunk_rows_(chunk_rows) {}
  // The current table's next rows as text: up to chunk_rows_, fewer only at its end.
  std::vector<Row> next_rows();
  void next_table();

  Connection connection_;  // declared first: the stream below ends before it closes
  std::size_t chunk_rows_;
  SnapshotPosition position_;
  std::vector<std::shared_ptr<const TableSchema>> schemas_;
  std::vector<std::optional<KeysetPager>> pagers_;  // per table; nullopt: streamed
  std::size_t current_ = 0;                         // the table being read
  std::optional<RowStream> stream_;                 // of the current table, when streamed
  std::uint64_t table_rows_read_ = 0;               // of the current table
  std::uint64_t rows_read_ = 0;
};

}  // namespace binberg::mysql
