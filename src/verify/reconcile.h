#pragma once

// `binberg reconcile`: proves that an Iceberg current-state table equals its source table.
//
// A keyless source table has no current-state table (binberg keeps its changelog only): its rows
// are what the changelog's events leave (each after image in, each before image out), compared
// with the source's as a multiset (identical rows count), at a consistent point of the changelog.
// A changelog whose schema changed since the copy holds images of older shapes: that comparison is
// then skipped, and says so.
//
// Both sides are compared at one consistent point. The source is read in one consistent-snapshot
// transaction whose binlog position P MariaDB reports; the table side is the latest snapshot S
// whose recorded position is at or before P, and the binlog between S's position and P is read
// to show that no transaction in it touches the table (otherwise the writer is behind: reconcile
// waits and tries again). The source is read by one streamed SELECT (mysql::ReadMethod::kStreamed),
// never through the keyset paging of the initial copy, so a hole in that paging cannot hide in
// both sides. Then:
//   - row counts, primary-key uniqueness in the table;
//   - a typed row-level diff by primary key (missing, extra, different columns, first examples);
//   - the SHA-256 digest of the canonical rows of each side (iceberg/canonical_row.h);
//   - an event-id audit of the changelog table against the binlog from the table's initial
//     snapshot to S: every source event present exactly once, redelivered duplicates counted.
//
// Invariant: the verdict is EQUAL only when every check ran and passed, or a check that did not
// run was skipped at the user's request (--no-audit). A check that cannot run (or runs only in
// part) is reported with its reason and makes the verdict INCOMPLETE; any failed check makes it
// DIFFERENT.

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
#include "verify/changelog_audit.h"

namespace binberg::verify {

enum class AuditRequest {
  kRun,
  kSkip,  // --no-audit: reported as skipped, and accepted
};

struct ReconcileOptions {
  mysql::ConnectionOptions source;
  std::uint32_t server_id = 0;  // replica id for reading the binlog gap and the audit
  capture::CapturedTable table;
  iceberg::TableIdentifier state_table;      // a keyed table's current state
  iceberg::TableIdentifier changelog_table;  // audited; a keyless table's rows are replayed from it
  AuditRequest audit = AuditRequest::kRun;
  std::chrono::milliseconds wait{120'000};  // for the writer to reach the source
  std::size_t max_examples = 10;
  std::size_t chunk_rows = 10'000;  // source rows handed over at a time
};

struct RowDifference {
  std::string kind;                   // "missing" (in the source only), "extra" (in the table only), "different"
  std::string key;                    // the primary key as canonical text (keyless: which of identical rows)
  std::vector<std::string> columns;   // "different": the columns that differ
  std::string source_row, table_row;  // canonical text, "" when absent
};

enum class Verdict { kEqual, kDifferent, kIncomplete };
const char* to_string(Verdict verdict);  // "equal", "different", "incomplete"
// The verdict over several tables: DIFFERENT if any is, else INCOMPLETE if any is, else EQUAL.
Verdict combine(Verdict a, Verdict b);

struct ReconcileReport {
  std::string source_table, iceberg_table;
  capture::SourcePosition source_position;
  capture::SourcePosition table_position;
  std::int64_t snapshot_id = 0;
  std::uint64_t source_rows = 0, table_rows = 0, duplicate_keys = 0;
  std::uint64_t missing = 0, extra = 0, different = 0;
  std::vector<RowDifference> examples;
  std::string source_digest, table_digest;
  std::optional<EventAudit> audit;  // nullopt when it did not run (see skipped)
  std::vector<SkippedCheck> skipped;
  int attempts = 0;

  Verdict verdict() const;
  nlohmann::json to_json() const;
  std::string to_text() const;
};

// Throws Error when no consistent point is reached within OPTIONS.wait, naming both positions.
ReconcileReport reconcile(const ReconcileOptions& options, iceberg::Catalog& catalog);

}  // namespace binberg::verify
