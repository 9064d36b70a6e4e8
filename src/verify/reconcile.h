#pragma once

// `binberg reconcile`: proves that an Iceberg current-state table equals its source table.
//
// Both sides are compared at one consistent point. The source is read in one consistent-snapshot
// transaction whose binlog position P MariaDB reports; the table side is the latest snapshot S
// whose recorded position is at or before P, and the binlog between S's position and P is read
// to show that no transaction in it touches the table (otherwise the writer is behind: reconcile
// waits and tries again). Then:
//   - row counts, primary-key uniqueness in the table;
//   - a typed row-level diff by primary key (missing, extra, different columns, first examples);
//   - the SHA-256 digest of the canonical rows of each side (iceberg/canonical_row.h);
//   - an event-id audit of the changelog table against the binlog from the table's initial
//     snapshot to S: every source event present exactly once, redelivered duplicates counted.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "capture/captured_table.h"
#include "capture/source_position.h"
#include "iceberg/catalog.h"
#include "mysql/connection.h"

namespace binberg::verify {

struct ReconcileOptions {
  mysql::ConnectionOptions source;
  std::uint32_t server_id = 0;  // replica id for reading the binlog gap and the audit
  capture::CapturedTable table;
  iceberg::TableIdentifier state_table;
  std::optional<iceberg::TableIdentifier> changelog_table;  // audit when set
  std::chrono::milliseconds wait{120'000};                  // for the writer to reach the source
  std::size_t max_examples = 10;
};

struct RowDifference {
  std::string kind;                   // "missing" (in the source only), "extra" (in the table only), "different"
  std::string key;                    // the primary key, as canonical text
  std::vector<std::string> columns;   // "different": the columns that differ
  std::string source_row, table_row;  // canonical text, "" when absent
};

struct EventAudit {
  std::uint64_t source_events = 0;  // row events of the table in the binlog, plus snapshot rows
  std::uint64_t changelog_rows = 0;
  std::uint64_t missing = 0;     // source events without a changelog row
  std::uint64_t duplicates = 0;  // changelog rows whose event id appears more than once
  std::uint64_t unknown = 0;     // changelog rows with an event id the source does not have
  std::vector<std::string> examples;
  bool ok() const { return missing == 0 && duplicates == 0 && unknown == 0; }
};

struct ReconcileReport {
  std::string source_table, iceberg_table;
  capture::SourcePosition source_position;
  capture::SourcePosition table_position;
  std::int64_t snapshot_id = 0;
  std::uint64_t source_rows = 0, table_rows = 0, duplicate_keys = 0;
  std::uint64_t missing = 0, extra = 0, different = 0;
  std::vector<RowDifference> examples;
  std::string source_digest, table_digest;
  std::optional<EventAudit> audit;
  int attempts = 0;

  bool ok() const;
  nlohmann::json to_json() const;
  std::string to_text() const;
};

// Throws Error when no consistent point is reached within OPTIONS.wait, naming both positions.
ReconcileReport reconcile(const ReconcileOptions& options, iceberg::Catalog& catalog);

}  // namespace binberg::verify
