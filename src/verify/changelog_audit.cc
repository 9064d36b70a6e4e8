#include "verify/changelog_audit.h"

#include <fmt/format.h>

#include <charconv>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "core/assert.h"
#include "core/error.h"
#include "iceberg/table_scan.h"
#include "tables/snapshot_properties.h"

namespace binberg::verify {
namespace {

// What the changelog holds at the audited snapshot.
struct ChangelogRows {
  std::unordered_map<std::string, std::uint32_t> times_seen;  // by event id
  std::uint64_t rows = 0;
  std::set<std::pair<std::string, std::uint64_t>> copied_at;  // the positions of the copies its 'r' rows are from
  std::optional<mysql::BinlogPosition> first_streamed;        // the earliest end of a c/u/d row's transaction
};

ChangelogRows read_changelog(const iceberg::LoadedTable& changelog, const iceberg::Snapshot& snapshot) {
  // _event_id, _op, _binlog_file, _binlog_pos (tables/table_mapping.h)
  const iceberg::Schema& schema = changelog.metadata.current_schema();
  const iceberg::Schema projection(0, {schema.fields()[0], schema.fields()[1], schema.fields()[3], schema.fields()[4]});
  ChangelogRows rows;
  iceberg::scan_rows(iceberg::plan_scan(changelog.metadata, snapshot.snapshot_id), projection,
                     [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) {
                       ++rows.rows;
                       ++rows.times_seen[std::get<std::string>(row[0])];
                       const auto* file = std::get_if<std::string>(&row[2]);
                       const auto* offset = std::get_if<std::int64_t>(&row[3]);
                       if (file == nullptr || offset == nullptr) return;
                       const mysql::BinlogPosition at{*file, static_cast<std::uint64_t>(*offset)};
                       if (std::get<std::string>(row[1]) == "r") {
                         if (rows.copied_at.size() < 2) rows.copied_at.emplace(at.file, at.offset);
                       } else if (!rows.first_streamed || capture::compare_binlog(at, *rows.first_streamed) < 0) {
                         rows.first_streamed = at;
                       }
                     });
  return rows;
}

// The size of the initial copy as the commit that applied it records (path A's first snapshot, or
// the sink's commit of the copy's source transaction; its earlier snapshots may hold other tables'),
// and the changelog's first snapshot.
struct CopyRecord {
  std::optional<std::uint64_t> rows;
  const iceberg::Snapshot* first = nullptr;
};

CopyRecord find_copy_record(const iceberg::LoadedTable& changelog, const iceberg::Snapshot& snapshot) {
  CopyRecord copy{std::nullopt, &snapshot};
  for (;;) {
    if (auto it = copy.first->summary.find(tables::kSnapshotRowsProperty); it != copy.first->summary.end()) {
      copy.rows = std::stoull(it->second);
    }
    if (!copy.first->parent_snapshot_id) return copy;
    const iceberg::Snapshot* parent = changelog.metadata.find_snapshot(*copy.first->parent_snapshot_id);
    if (parent == nullptr) {
      fail(
          "changelog {}: its history was expired (snapshot {} is gone); the event audit needs every snapshot back to "
          "the initial copy — run reconcile with --no-audit, or expire only the current-state tables",
          changelog.id.to_string(), *copy.first->parent_snapshot_id);
    }
    copy.first = parent;
  }
}

// Where the audit starts: the copy's position and size, or (a sink's table whose copy had no rows)
// the first event the changelog holds.
struct AuditStart {
  mysql::BinlogPosition copy_position;
  std::uint64_t copy_rows = 0;
  std::optional<mysql::BinlogPosition> first_event;  // set: only transactions ending here or later
};

// A sink's table: where its audit starts, or why it cannot run.
std::variant<AuditStart, std::string> sink_audit_start(const ChangelogRows& rows, const CopyRecord& copy) {
  if (rows.copied_at.size() > 1) return std::string("its initial-copy rows come from two copies");
  if (rows.copied_at.size() == 1) {
    if (!copy.rows) return std::string("no commit records the size of its initial copy");
    const auto& [file, offset] = *rows.copied_at.begin();
    return AuditStart{mysql::BinlogPosition{file, offset}, *copy.rows, std::nullopt};
  }
  if (!rows.first_streamed) {
    return std::string(
        "it holds no event, and the table's initial copy had no rows: nothing records where the copy "
        "began");
  }
  return AuditStart{*rows.first_streamed, copy.rows.value_or(0), rows.first_streamed};
}

// Whether ID is the event id of row I < COPY_ROWS of the copy PREFIX names ("snapshot:...#").
bool is_copy_event(std::string_view id, std::string_view prefix, std::uint64_t copy_rows) {
  if (!id.starts_with(prefix)) return false;
  std::uint64_t index = 0;
  const std::string_view digits = id.substr(prefix.size());
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  return error == std::errc() && end == digits.data() + digits.size() && index < copy_rows;
}

class Auditor {
 public:
  Auditor(const ChangelogRows& rows, const capture::CapturedTable& table, std::size_t max_examples)
      : rows_(rows), table_(table), max_examples_(max_examples) {
    audit_.changelog_rows = rows.rows;
  }

  EventAudit run(const BinlogAccess& access, const AuditStart& start, const mysql::BinlogPosition& until) {
    count_duplicates();
    check_copy(start);
    // Without a record of the copy, from the start of the file of the first event the changelog holds.
    const mysql::BinlogPosition from =
        start.first_event ? mysql::BinlogPosition{start.first_event->file, 4} : start.copy_position;
    read_binlog(access, from, until, [&](const SourceTransaction& txn) {
      if (start.first_event &&
          capture::compare_binlog(mysql::BinlogPosition{txn.file, txn.end_pos}, *start.first_event) < 0) {
        return true;
      }
      for (const ChangeEvent& event : txn.events) {
        if (event.source.database == table_.database && event.source.table == table_.table) expect(event.event_id);
      }
      return true;
    });
    count_unknown(start);
    return std::move(audit_);
  }

 private:
  void example(std::string text) {
    if (audit_.examples.size() < max_examples_) audit_.examples.push_back(std::move(text));
  }

  void count_duplicates() {
    for (const auto& [id, times] : rows_.times_seen) {
      if (times < 2) continue;
      audit_.duplicates += times - 1;
      example(fmt::format("duplicate {} ({} times)", id, times));
    }
  }

  // Every row of the copy by its id (the copy's rows are numbered in the order they were read).
  void check_copy(const AuditStart& start) {
    audit_.source_events += start.copy_rows;
    if (start.copy_rows > 0 && start.first_event) {
      // A copy with rows whose rows the changelog does not hold at all.
      audit_.missing += start.copy_rows;
      example(fmt::format("{} initial-copy rows recorded, none in the changelog", start.copy_rows));
      return;
    }
    SourceInfo copy{0, "", start.copy_position.file, start.copy_position.offset, 0, 0, table_.database, table_.table};
    for (std::uint64_t row = 0; row < start.copy_rows; ++row) {
      copy.row_index = static_cast<std::uint32_t>(row);
      const std::string id = make_event_id(copy, Op::kSnapshot);
      if (rows_.times_seen.contains(id)) continue;
      ++audit_.missing;
      example("missing " + id);
    }
  }

  void expect(const std::string& id) {
    ++audit_.source_events;
    expected_.insert(id);
    if (rows_.times_seen.contains(id)) return;
    ++audit_.missing;
    example("missing " + id);
  }

  void count_unknown(const AuditStart& start) {
    SourceInfo copy{0, "", start.copy_position.file, start.copy_position.offset, 0, 0, table_.database, table_.table};
    std::string prefix = make_event_id(copy, Op::kSnapshot);
    prefix.pop_back();  // the row index 0
    for (const auto& [id, times] : rows_.times_seen) {
      if (expected_.contains(id) || (!start.first_event && is_copy_event(id, prefix, start.copy_rows))) continue;
      ++audit_.unknown;
      example("unknown " + id);
    }
  }

  const ChangelogRows& rows_;
  const capture::CapturedTable& table_;
  std::size_t max_examples_;
  EventAudit audit_;
  std::unordered_set<std::string> expected_;  // the binlog's event ids of the table
};

}  // namespace

AuditOutcome audit_changelog(const BinlogAccess& access, iceberg::Catalog& catalog,
                             const iceberg::TableIdentifier& changelog_id, const capture::CapturedTable& table,
                             const capture::SourcePosition& state_position, std::size_t max_examples) {
  const iceberg::LoadedTable changelog = catalog.load_table(changelog_id);
  const iceberg::Snapshot* snapshot = snapshot_at_or_before(changelog, state_position);
  if (snapshot == nullptr || capture::compare_binlog(position_of(*snapshot)->binlog, state_position.binlog) != 0) {
    fail("changelog {} has no snapshot at {}: it was not committed with its table", changelog_id.to_string(),
         state_position.to_string());
  }
  const CopyRecord copy = find_copy_record(changelog, *snapshot);
  const ChangelogRows rows = read_changelog(changelog, *snapshot);
  AuditStart start;
  if (!written_by_sink(changelog)) {
    // Path A's first snapshot is at the copy's position.
    start = AuditStart{position_of(*copy.first)->binlog, copy.rows.value_or(0), std::nullopt};
  } else {
    auto sink_start = sink_audit_start(rows, copy);
    if (const auto* reason = std::get_if<std::string>(&sink_start))
      return {std::nullopt, SkippedCheck{"audit", *reason}};
    start = std::get<AuditStart>(sink_start);
  }
  AuditOutcome outcome{Auditor(rows, table, max_examples).run(access, start, state_position.binlog), std::nullopt};
  if (start.first_event) {
    outcome.skipped = SkippedCheck{
        "audit", fmt::format("events of the table before {} (the first the changelog holds) were not checked: its "
                             "initial copy had no rows, and nothing records where that copy began",
                             start.first_event->to_string())};
  }
  return outcome;
}

}  // namespace binberg::verify
