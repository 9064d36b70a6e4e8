#pragma once

// The event-id audit of a changelog table (reconcile): every row event of the source table in the
// binlog from the table's initial copy up to the compared snapshot S, and every row of the copy,
// has exactly one changelog row with its event id; a changelog row with an id the source does not
// have is unknown.
//
// Where the audit starts and how many copy events it expects:
//   - path A: its first snapshot is at the copy's position and records the copy's size
//     (binberg.snapshot-rows; absent: no rows);
//   - a sink's table: the copy's rows carry the copy's position, and the sink's commit that
//     applied the copy records its size. When the copy had no rows of the table, nothing records
//     where it began: the audit checks every changelog row, and the binlog from the first event
//     the changelog holds, and reports the events before that one as not checked. When the copy
//     rows come from two copies, or no commit records their number, it does not run.
// The copy's events are checked by id (snapshot:<file>:<pos>:<db>.<table>#<i> for i below the
// copy's size), the streamed events against the ids the binlog gives them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capture/captured_table.h"
#include "capture/source_position.h"
#include "iceberg/catalog.h"
#include "verify/table_history.h"

namespace binberg::verify {

// A check reconcile did not make, or made only in part: which, and why.
struct SkippedCheck {
  std::string check;  // e.g. "audit"
  std::string reason;
  bool accepted = false;  // the user asked for it to be skipped: not held against the verdict
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

struct AuditOutcome {
  std::optional<EventAudit> audit;      // nullopt: it did not run
  std::optional<SkippedCheck> skipped;  // what it left out, and why
};

// Audits CHANGELOG_ID (of TABLE) at its snapshot at STATE_POSITION, where the current-state table
// was compared. Throws Error when the changelog has no snapshot there, or its history back to the
// initial copy was expired.
AuditOutcome audit_changelog(const BinlogAccess& access, iceberg::Catalog& catalog,
                             const iceberg::TableIdentifier& changelog_id, const capture::CapturedTable& table,
                             const capture::SourcePosition& state_position, std::size_t max_examples);

}  // namespace binberg::verify
