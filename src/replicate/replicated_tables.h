#pragma once

// The tables of one replicator session: for each captured source table that binberg can map, its
// Iceberg tables (replicator.h), their writers, and the source position they hold.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/captured_table.h"
#include "capture/source_position.h"
#include "core/clock.h"
#include "core/table_schema.h"
#include "iceberg/catalog.h"
#include "iceberg/table_writer.h"
#include "metrics/metrics.h"
#include "replicate/replicator_metrics.h"
#include "replicate/replicator_ports.h"
#include "replicate/table_committer.h"
#include "tables/table_mapping.h"

namespace binberg::replicate {

struct ReplicatorOptions;
struct ReplicatorStats;

struct ReplicatedTable {
  capture::CapturedTable source;
  // The source definition the Iceberg tables hold (recorded in their kSourceSchemaProperty).
  std::shared_ptr<const TableSchema> schema;
  iceberg::TableIdentifier state_id, changelog_id;
  std::unique_ptr<iceberg::TableWriter> state;  // null without a primary key
  std::unique_ptr<iceberg::TableWriter> changelog;
  std::optional<capture::SourcePosition> position;  // what the tables hold; nullopt until snapshotted
  std::optional<tables::RowMapping> mapping;        // for the last source schema seen (events share one)
  bool dirty = false;
  std::uint64_t snapshot_rows = 0;    // rows of the initial copy
  metrics::Counter* applied[3] = {};  // row events applied, by op: insert, update, delete
  std::chrono::steady_clock::time_point last_commit;

  // The mapping of ROWS_SCHEMA's rows onto the Iceberg tables (built and checked when ROWS_SCHEMA is new).
  const tables::RowMapping& mapping_for(const std::shared_ptr<const TableSchema>& rows_schema);
  // Appends the writers a commit of the table moves: the state table's (if any), the changelog's.
  void add_writers(std::vector<iceberg::TableWriter*>& writers) const;
  // The tables now hold POSITION, committed at NOW: nothing of them is pending. Asserts that both
  // record POSITION and that it is past the one they held (invariants 3 and 4).
  void committed(const capture::SourcePosition& position, std::chrono::steady_clock::time_point now);
};

// The source position TABLE's current snapshot records; nullopt when it has none.
std::optional<capture::SourcePosition> committed_position(const iceberg::LoadedTable& table);

class ReplicatedTables {
 public:
  ReplicatedTables(const ReplicatorOptions& options, iceberg::Catalog& catalog, ReplicatorSource& source,
                   TimeSource& time, ReplicatorMetrics& metrics);

  // Opens the Iceberg tables of CAPTURED (creating them when missing) and adds them; throws
  // tables::UnmappableTable.
  void open(const capture::CapturedTable& captured);
  ReplicatedTable* find(const std::string& database, const std::string& table);
  // The tables the Iceberg side has no position for yet: the initial copy's.
  std::vector<ReplicatedTable*> without_position() const;
  // The smallest position any table holds, where streaming starts (each table skips what it has).
  // Every table must have one.
  capture::SourcePosition smallest_position() const;
  // The initial copy of TABLES: one consistent snapshot of them all and one commit, so a source
  // transaction over several of them is in every copy or in none, and readers never see a partial
  // copy. Counts its rows and its commit in STATS.
  void copy_initial(const std::vector<ReplicatedTable*>& tables, TableCommitter& committer, ReplicatorStats& stats);

  bool empty() const { return tables_.empty(); }
  std::size_t size() const { return tables_.size(); }
  auto begin() { return tables_.begin(); }
  auto end() { return tables_.end(); }

 private:
  const ReplicatorOptions& options_;
  iceberg::Catalog& catalog_;
  ReplicatorSource& source_;
  TimeSource& time_;
  ReplicatorMetrics& metrics_;
  std::vector<std::unique_ptr<ReplicatedTable>> tables_;
};

}  // namespace binberg::replicate
