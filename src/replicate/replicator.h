#pragma once

// Path A: binlog -> Iceberg, exactly once.
//
// For each captured source table `T`, two Iceberg tables: `T` (current state, keyed upsert on the
// source primary key) and `T_changelog` (append-only history). A table without a primary key gets
// the changelog only.
//
// The commit protocol and the invariants it keeps (docs/architecture.md):
//   1. Whole transactions: changes are applied to the writers in source order, a transaction's
//      batches one after another, and a commit is cut only between transactions (a stop request
//      waits for the transaction in flight to end), so no snapshot holds part of a transaction.
//   2. Atomic visibility: every Iceberg table a commit touches moves in one catalog transaction
//      (commit_tables), so a transaction spanning tables becomes visible everywhere at once.
//   3. The position is in the data: each snapshot's summary records the source position after
//      the last transaction it contains (SourcePosition). A restart reads it back from the tables
//      themselves, streams from the smallest, and skips in each table what it already holds — so
//      nothing is applied twice and nothing is skipped.
//   4. Monotonic states: transactions are applied in binlog order and a table's position only
//      grows, so no snapshot shows a row state older than an earlier snapshot showed.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/captured_table.h"
#include "capture/source_position.h"
#include "capture/source_reader.h"
#include "core/clock.h"
#include "core/source_transaction.h"
#include "iceberg/catalog.h"
#include "iceberg/table_writer.h"
#include "metrics/metrics.h"
#include "mysql/connection.h"
#include "mysql/ddl_statement.h"
#include "replicate/replicator_metrics.h"
#include "replicate/replicator_ports.h"
#include "replicate/table_committer.h"
#include "tables/schema_change.h"
#include "tables/table_mapping.h"

namespace binberg::replicate {

class ReplicatedTables;
struct ReplicatedTable;

struct ReplicatorOptions {
  mysql::ConnectionOptions source;
  std::uint32_t server_id = 0;  // replica id towards the source; unique among its replicas
  std::vector<capture::CapturedTable> tables;
  std::string iceberg_namespace;  // empty: each table's source database
  std::string changelog_suffix = "_changelog";
  capture::CommitPolicy commit;
  iceberg::TableWriterOptions writer;  // writer.writer_id goes into every snapshot summary
  std::size_t snapshot_chunk_rows = 10'000;
  std::chrono::milliseconds heartbeat{250};
  metrics::Registry* metrics = nullptr;  // where to export metrics (none: kept internally)
  // Memory: the binlog reader's transaction buffer (spooled beyond it) and queue. The writers'
  // buffers are writer.max_buffered_bytes each (two per table with a primary key, one without).
  capture::SourceReaderOptions reader;
  // Schema changes the operator accepted though the policy refuses them (schema_change.h), by
  // GTID (or binlog file:pos without GTIDs).
  std::vector<std::string> accepted_schema_changes;
  std::uint32_t max_consecutive_conflicts = 10;
  // [types]: what the tables created get for source types with no exact Iceberg type.
  tables::TypeMapping types;
};

struct ReplicatorStats {
  std::uint64_t transactions = 0;          // read from the binlog
  std::uint64_t events = 0;                // row events applied to captured tables
  std::uint64_t skipped_transactions = 0;  // already in every table they touch (restart)
  std::uint64_t snapshot_rows = 0;
  std::uint64_t commits = 0;
  std::uint64_t commit_conflicts = 0;      // commits lost to another writer, each followed by a reopen
  std::uint64_t catalog_outages = 0;       // sessions ended by an unreachable catalog, each followed by a reopen
  std::int64_t last_commit_ms = 0;         // duration of the last catalog commit
  std::int64_t last_source_commit_ms = 0;  // source commit time of the last transaction committed
  std::string position;                    // last committed position, for logs
  // Captured tables binberg cannot map (tables::UnmappableTable), with why: it does not replicate them.
  std::vector<std::string> stopped_tables;
};

class Replicator {
 public:
  // On the MariaDB server OPTIONS.source names, in real time.
  Replicator(ReplicatorOptions options, iceberg::Catalog& catalog);
  // On SOURCE and TIME instead (a simulation's); OPTIONS.source and server_id are not used.
  Replicator(ReplicatorOptions options, iceberg::Catalog& catalog, ReplicatorSource& source, TimeSource& time);
  ~Replicator();

  // Creates the Iceberg tables that are missing, snapshots the source tables the Iceberg tables
  // have no position for yet, then streams until STOP returns true (checked between transactions
  // and at least every heartbeat), commits what is pending and returns.
  //
  // A captured table binberg cannot map (tables::UnmappableTable: a type with no exact Iceberg
  // type under options.types, a floating-point primary key) stops alone: it gets no Iceberg tables
  // and is left out, with an error in the log, in stats().stopped_tables and in the gauge
  // binberg_replicate_stopped_tables; the others replicate. Having no position, it is copied from
  // an initial snapshot of its own once a later run can map it, so nothing of it is lost. With
  // every table stopped, run throws ConfigError.
  //
  // A commit that loses its catalog swap to another writer of a table (compaction, snapshot
  // expiry) is not an error: nothing of it was published, so every table is reopened from the
  // catalog and streaming resumes from the positions the tables record, as after a restart.
  // max_consecutive_conflicts in a row without a commit in between end the run with the conflict.
  //
  // The catalog reconnects by itself (catalog_retry.h); one that stays unreachable for a whole
  // retry budget (iceberg::CatalogUnavailable) ends the session the same way, after a backoff of
  // 0.5 s doubling to 30 s: the tables, reopened, say what landed.
  void run(const std::function<bool()>& stop);

  const ReplicatorStats& stats() const { return stats_; }

 private:
  // What both constructors share; SOURCE is null for the MariaDB one until it made its own.
  Replicator(ReplicatorOptions options, iceberg::Catalog& catalog, ReplicatorSource* source, TimeSource& time);

  // One run from opening the tables to STOP, or to a CommitConflict.
  void run_session(const std::function<bool()>& stop);
  void open_tables();
  // BATCH, read after READ_POSITION; with the last batch of its transaction, the transaction ends
  // and READ_POSITION moves after it.
  void apply_batch(const capture::TransactionBatch& batch, capture::SourcePosition& read_position);
  // EVENTS of TXN, the next of its batches.
  enum class Batch { kFirst, kLater };
  void apply(const SourceTransaction& txn, const std::vector<ChangeEvent>& events, Batch batch);
  void finish(const SourceTransaction& txn);
  void apply_schema_change(const SourceTransaction& txn, const capture::SourcePosition& before,
                           const capture::SourcePosition& after);
  // TABLE's schema as the source defines it after TXN's DDL, evolved into its Iceberg tables.
  void evolve_schema(ReplicatedTable& table, const SourceTransaction& txn, const mysql::DdlStatement& ddl,
                     const std::string& where);
  // Which tables a commit moves: those with changes (and those whose position is due, see
  // CommitPolicy::idle_position_interval), or every table (a graceful stop's savepoint).
  enum class CommitScope { kChangedTables, kAllTables };
  // Commits at POSITION, which must be between transactions (invariant 1: asserted).
  void commit(const capture::SourcePosition& position, CommitScope scope);

  ReplicatorOptions options_;
  iceberg::Catalog& catalog_;
  std::unique_ptr<metrics::Registry> own_registry_;  // when the options give none
  ReplicatorMetrics metrics_;
  capture::SourceReaderMetrics reader_metrics_;
  std::unique_ptr<ReplicatorSource> own_source_;  // MariaDB, when the constructor gives none
  ReplicatorSource* source_;
  TimeSource* time_;
  TableCommitter committer_;
  std::unique_ptr<ReplicatedTables> tables_;  // of the session running
  ReplicatorStats stats_;
  std::size_t pending_events_ = 0;
  std::int64_t pending_source_commit_ms_ = 0;
  // Of the transaction being applied: did it touch a captured table, and apply anything to one.
  bool txn_captured_ = false, txn_applied_ = false;
  // The transaction whose batches are arriving (null between transactions): no commit may be cut
  // while it is set, or a snapshot would hold part of it (invariant 1).
  std::shared_ptr<const SourceTransaction> in_flight_;
};

}  // namespace binberg::replicate
