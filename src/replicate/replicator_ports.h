#pragma once

// Where path A meets the world outside its tables: the source database (its tables' schemas, a
// consistent snapshot of them, its binlog as whole transactions) and time. The replicator runs on
// MariaDB (mariadb_source()); a deterministic simulation runs the same replicator on a simulated
// source and clock (tests/replicate/replicator_simulation_test.cc), with a real catalog.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/source_position.h"
#include "capture/source_reader.h"
#include "core/change_event.h"
#include "mysql/connection.h"
#include "mysql/snapshot_reader.h"

namespace binberg::replicate {

// One consistent snapshot of tables (mysql/snapshot_reader.h has the contract).
class SnapshotInput {
 public:
  virtual ~SnapshotInput() = default;
  // Where streaming continues after the snapshot.
  virtual capture::SourcePosition position() const = 0;
  // The tables' schemas, in the order they were asked for.
  virtual const std::vector<std::shared_ptr<const TableSchema>>& schemas() const = 0;
  // The next chunk of one table's rows as op 'r' events; empty once every table was read.
  virtual std::vector<ChangeEvent> next_chunk() = 0;
  virtual std::uint64_t rows_read() const = 0;  // over all tables
};

// The binlog from a position on, as whole transactions in batches (capture/source_reader.h).
class StreamInput {
 public:
  virtual ~StreamInput() = default;
  // The next batch, waiting up to TIMEOUT; nullopt when none came.
  virtual std::optional<capture::TransactionBatch> next(std::chrono::milliseconds timeout) = 0;
};

class ReplicatorSource {
 public:
  virtual ~ReplicatorSource() = default;
  // Throws ConfigError when the source cannot be captured (binlog format, row images).
  virtual void check_ready() = 0;
  // The table's schema as the source defines it now.
  virtual std::shared_ptr<const TableSchema> table_schema(const std::string& database, const std::string& table) = 0;
  virtual std::unique_ptr<SnapshotInput> snapshot(const std::vector<mysql::TableName>& tables,
                                                  std::size_t chunk_rows) = 0;
  // Throws when START is no longer in the source's binlog.
  virtual std::unique_ptr<StreamInput> stream(const capture::SourcePosition& start) = 0;
};

struct MariadbSourceOptions {
  mysql::ConnectionOptions connection;
  std::uint32_t server_id = 0;  // replica id towards the source
  std::chrono::milliseconds heartbeat{250};
  capture::SourceReaderOptions reader;
};

// The source MariaDB (or MySQL) server; each call opens the connections it needs.
std::unique_ptr<ReplicatorSource> mariadb_source(MariadbSourceOptions options, capture::SourceReaderMetrics& metrics);

}  // namespace binberg::replicate
