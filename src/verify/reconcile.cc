#include "verify/reconcile.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/error.h"
#include "iceberg/canonical_row.h"
#include "iceberg/table_scan.h"
#include "mysql/charset.h"
#include "mysql/ddl_statement.h"
#include "mysql/snapshot_reader.h"
#include "mysql/transaction_reader.h"
#include "tables/snapshot_properties.h"
#include "tables/table_mapping.h"
#include "tables/table_pair.h"

namespace binberg::verify {
namespace {

using Cells = std::vector<std::optional<std::string>>;

struct SideRows {
  std::map<std::string, Cells> by_key;
  iceberg::RowDigest digest;
  std::uint64_t rows = 0;
  std::uint64_t duplicate_keys = 0;
};

class RowCollector {
 public:
  explicit RowCollector(const iceberg::Schema& schema) : schema_(schema) {
    for (std::int32_t id : schema.identifier_field_ids()) {
      for (std::size_t c = 0; c < schema.fields().size(); ++c) {
        if (schema.fields()[c].id == id) key_columns_.push_back(c);
      }
    }
  }

  void add(const iceberg::Row& row, SideRows& side) const {
    Cells cells;
    for (std::size_t c = 0; c < row.size(); ++c)
      cells.push_back(iceberg::canonical_text(*schema_.fields()[c].type, row[c]));
    side.digest.add(iceberg::canonical_row_encoding(schema_, row));
    ++side.rows;
    std::string key;
    for (std::size_t c : key_columns_) {
      if (!key.empty()) key += ", ";
      key += schema_.fields()[c].name + "=" + cells[c].value_or("NULL");
    }
    if (!side.by_key.emplace(std::move(key), std::move(cells)).second) ++side.duplicate_keys;
  }

 private:
  const iceberg::Schema& schema_;
  std::vector<std::size_t> key_columns_;
};

std::string row_text(const iceberg::Schema& schema, const Cells& cells) {
  std::string text;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) text += ", ";
    text += schema.fields()[c].name + "=" + cells[c].value_or("NULL");
  }
  return text;
}

std::optional<capture::SourcePosition> position_of(const iceberg::Snapshot& snapshot) {
  return capture::SourcePosition::from_summary(snapshot.summary);
}

// Whether `binberg sink` writes TABLE: its snapshots claim a source position only when the sink had
// read the table's topic to its end (kafka_sink.h), so the others record none.
bool written_by_sink(const iceberg::LoadedTable& table) {
  return table.metadata.properties.contains(tables::kSinkTopicProperty);
}

// The latest snapshot of TABLE at or before P (following the parents of the current one).
const iceberg::Snapshot* snapshot_at_or_before(const iceberg::LoadedTable& table, const capture::SourcePosition& p) {
  for (const iceberg::Snapshot* snapshot = table.metadata.current_snapshot(); snapshot != nullptr;
       snapshot = snapshot->parent_snapshot_id ? table.metadata.find_snapshot(*snapshot->parent_snapshot_id)
                                               : nullptr) {
    const auto position = position_of(*snapshot);
    if (!position && written_by_sink(table)) {
      // The sink is between two points it can claim: wait for the next rather than compare its last.
      if (snapshot == table.metadata.current_snapshot()) return nullptr;
      continue;
    }
    if (!position)
      fail("table {}: snapshot {} records no source position", table.id.to_string(), snapshot->snapshot_id);
    if (capture::compare_binlog(position->binlog, p.binlog) <= 0) return snapshot;
  }
  return nullptr;
}

mysql::StreamOptions stream_from(const ReconcileOptions& options, const mysql::BinlogPosition& from) {
  mysql::StreamOptions stream;
  stream.connection = options.source;
  stream.server_id = options.server_id;
  stream.start_position = from;
  stream.blocking = false;
  return stream;
}

// Reads whole transactions from FROM while they end at or before UNTIL; VISIT returns false to stop.
// True when the DDL statement CHANGE alters or replaces TABLE.
bool changes_table(const SchemaChange& change, const capture::CapturedTable& table) {
  const mysql::DdlStatement ddl = mysql::parse_ddl(change.statement, change.database);
  return std::any_of(ddl.tables.begin(), ddl.tables.end(),
                     [&](const mysql::DdlTable& t) { return t.database == table.database && t.table == table.table; });
}

void read_binlog(const ReconcileOptions& options, const mysql::CharsetNames& charsets,
                 const mysql::BinlogPosition& from, const mysql::BinlogPosition& until,
                 const std::function<bool(const SourceTransaction&)>& visit) {
  if (capture::compare_binlog(from, until) >= 0) return;
  mysql::TransactionReader reader(stream_from(options, from), charsets);
  while (auto txn = reader.next()) {
    if (capture::compare_binlog(mysql::BinlogPosition{txn->file, txn->end_pos}, until) > 0) return;
    if (!visit(*txn)) return;
  }
}

// The event-id audit of TABLE's changelog at STATE_POSITION: every row event of the table in the
// binlog from its initial copy up to there, plus the copy's rows, exactly once. Nullopt (with a
// warning: rows are still compared) for a sink table that does not say where its copy began or
// how big it was (no copy, or written before binberg recorded its size).
std::optional<EventAudit> audit_changelog(const ReconcileOptions& options, iceberg::Catalog& catalog,
                                          const mysql::CharsetNames& charsets,
                                          const capture::SourcePosition& state_position) {
  EventAudit audit;
  const iceberg::LoadedTable changelog = catalog.load_table(*options.changelog_table);
  const bool sink = written_by_sink(changelog);
  const iceberg::Snapshot* snapshot = snapshot_at_or_before(changelog, state_position);
  if (snapshot == nullptr || capture::compare_binlog(position_of(*snapshot)->binlog, state_position.binlog) != 0) {
    fail("changelog {} has no snapshot at {}: it was not committed with its table",
         options.changelog_table->to_string(), state_position.to_string());
  }
  // The commit that holds the initial copy records its size: path A's first snapshot, or the
  // sink's commit of the copy's source transaction (its earlier snapshots may hold other tables').
  std::optional<std::uint64_t> snapshot_rows;
  const iceberg::Snapshot* first = snapshot;
  for (;;) {
    if (auto it = first->summary.find(tables::kSnapshotRowsProperty); it != first->summary.end()) {
      snapshot_rows = std::stoull(it->second);
    }
    if (!first->parent_snapshot_id) break;
    const iceberg::Snapshot* parent = changelog.metadata.find_snapshot(*first->parent_snapshot_id);
    if (parent == nullptr) {
      fail(
          "changelog {}: its history was expired (snapshot {} is gone); the event audit needs every snapshot back to "
          "the initial copy — run reconcile with --no-audit, or expire only the current-state tables",
          options.changelog_table->to_string(), *first->parent_snapshot_id);
    }
    first = parent;
  }

  // _event_id, _op and, for the initial copy's rows, the binlog position of the copy.
  const iceberg::Schema& schema = changelog.metadata.current_schema();
  const iceberg::Schema projection(0, {schema.fields()[0], schema.fields()[1], schema.fields()[3], schema.fields()[4]});
  std::unordered_map<std::string, std::uint32_t> seen;
  std::uint64_t snapshot_ops = 0;
  std::set<std::pair<std::string, std::uint64_t>> copied_at;  // binlog file and offset
  iceberg::scan_rows(iceberg::plan_scan(changelog.metadata, snapshot->snapshot_id), projection,
                     [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) {
                       ++audit.changelog_rows;
                       if (std::get<std::string>(row[1]) == "r") {
                         ++snapshot_ops;
                         const auto* file = std::get_if<std::string>(&row[2]);
                         const auto* offset = std::get_if<std::int64_t>(&row[3]);
                         if (sink && file != nullptr && offset != nullptr && copied_at.size() < 2) {
                           copied_at.emplace(*file, static_cast<std::uint64_t>(*offset));
                         }
                       }
                       if (++seen[std::get<std::string>(row[0])] == 2) {
                         ++audit.duplicates;
                         if (audit.examples.size() < options.max_examples) {
                           audit.examples.push_back("duplicate " + std::get<std::string>(row[0]));
                         }
                       } else if (seen[std::get<std::string>(row[0])] > 2) {
                         ++audit.duplicates;
                       }
                     });
  // Path A's first snapshot is at the copy's position. A sink's snapshots claim positions only
  // once caught up: the copy's rows carry it.
  mysql::BinlogPosition initial;
  if (!sink) {
    initial = position_of(*first)->binlog;
    snapshot_rows = snapshot_rows.value_or(0);
  } else {
    const char* problem = copied_at.empty()      ? "it holds no rows of an initial copy (the source took none)"
                          : copied_at.size() > 1 ? "its initial-copy rows come from two copies"
                          : !snapshot_rows       ? "no commit records the size of its initial copy"
                                                 : nullptr;
    if (problem != nullptr) {
      spdlog::warn("reconcile {}: no event-id audit: {}; rows compared only", options.changelog_table->to_string(),
                   problem);
      return std::nullopt;
    }
    initial = mysql::BinlogPosition{copied_at.begin()->first, copied_at.begin()->second};
  }
  audit.source_events = *snapshot_rows;
  if (snapshot_ops != *snapshot_rows) {
    audit.missing += *snapshot_rows > snapshot_ops ? *snapshot_rows - snapshot_ops : 0;
    audit.unknown += snapshot_ops > *snapshot_rows ? snapshot_ops - *snapshot_rows : 0;
    audit.examples.push_back(
        fmt::format("{} snapshot rows recorded, {} in the changelog", *snapshot_rows, snapshot_ops));
  }
  std::unordered_map<std::string, bool> expected;  // binlog event ids of the table -> seen in the changelog
  read_binlog(options, charsets, initial, state_position.binlog, [&](const SourceTransaction& txn) {
    for (const ChangeEvent& event : txn.events) {
      if (event.source.database != options.table.database || event.source.table != options.table.table) continue;
      ++audit.source_events;
      const bool present = seen.contains(event.event_id);
      expected.emplace(event.event_id, present);
      if (!present) {
        ++audit.missing;
        if (audit.examples.size() < options.max_examples) audit.examples.push_back("missing " + event.event_id);
      }
    }
    return true;
  });
  for (const auto& [id, count] : seen) {
    if (id.starts_with("snapshot:") || expected.contains(id)) continue;
    ++audit.unknown;
    if (audit.examples.size() < options.max_examples) audit.examples.push_back("unknown " + id);
  }
  return audit;
}

}  // namespace

bool ReconcileReport::ok() const {
  return source_rows == table_rows && duplicate_keys == 0 && missing == 0 && extra == 0 && different == 0 &&
         source_digest == table_digest && (!audit || audit->ok());
}

nlohmann::json ReconcileReport::to_json() const {
  nlohmann::json json;
  json["verdict"] = ok() ? "equal" : "different";
  json["source"] = {{"table", source_table},
                    {"position", source_position.to_string()},
                    {"rows", source_rows},
                    {"digest", source_digest}};
  json["iceberg"] = {
      {"table", iceberg_table}, {"snapshot_id", snapshot_id},       {"position", table_position.to_string()},
      {"rows", table_rows},     {"duplicate_keys", duplicate_keys}, {"digest", table_digest}};
  json["diff"] = {{"missing", missing}, {"extra", extra}, {"different", different}};
  nlohmann::json shown = nlohmann::json::array();
  for (const auto& example : examples) {
    shown.push_back({{"kind", example.kind},
                     {"key", example.key},
                     {"columns", example.columns},
                     {"source", example.source_row},
                     {"iceberg", example.table_row}});
  }
  json["diff"]["examples"] = shown;
  if (audit) {
    json["audit"] = {{"source_events", audit->source_events},
                     {"changelog_rows", audit->changelog_rows},
                     {"missing", audit->missing},
                     {"duplicates", audit->duplicates},
                     {"unknown", audit->unknown},
                     {"examples", audit->examples},
                     {"verdict", audit->ok() ? "clean" : "problems"}};
  }
  json["attempts"] = attempts;
  return json;
}

std::string ReconcileReport::to_text() const {
  std::string text = fmt::format("{} vs {}: {}\n", source_table, iceberg_table, ok() ? "EQUAL" : "DIFFERENT");
  text += fmt::format("  source   {} rows at {}\n           sha256 {}\n", source_rows, source_position.to_string(),
                      source_digest);
  text += fmt::format("  iceberg  {} rows in snapshot {} at {}\n           sha256 {}\n", table_rows, snapshot_id,
                      table_position.to_string(), table_digest);
  text += fmt::format("  diff     {} missing, {} extra, {} different, {} duplicate keys\n", missing, extra, different,
                      duplicate_keys);
  for (const auto& example : examples) {
    text += fmt::format("    {} [{}]", example.kind, example.key);
    if (!example.columns.empty()) text += fmt::format(" columns: {}", fmt::join(example.columns, ", "));
    text += "\n";
  }
  if (audit) {
    text += fmt::format("  audit    {} source events, {} changelog rows: {} missing, {} duplicates, {} unknown\n",
                        audit->source_events, audit->changelog_rows, audit->missing, audit->duplicates, audit->unknown);
    for (const auto& example : audit->examples) text += "    " + example + "\n";
  }
  return text;
}

ReconcileReport reconcile(const ReconcileOptions& options, iceberg::Catalog& catalog) {
  mysql::Connection connection = mysql::Connection::open(options.source);
  const mysql::CharsetNames charsets = mysql::CharsetNames::load(connection);
  const auto deadline = std::chrono::steady_clock::now() + options.wait;
  for (int attempt = 1;; ++attempt) {
    ReconcileReport report;
    report.attempts = attempt;
    report.source_table = options.table.qualified_name();
    report.iceberg_table = options.state_table.to_string();

    // The source, in one consistent snapshot at P.
    auto source = mysql::TableSnapshot::open(options.source, options.table.database, options.table.table);
    report.source_position = capture::SourcePosition{source.position().binlog, source.position().gtid};

    // The table, at the latest snapshot not after P, provided nothing between them touches it
    // (neither rows nor the table's definition).
    const iceberg::LoadedTable table = catalog.load_table(options.state_table);
    const iceberg::Snapshot* snapshot = snapshot_at_or_before(table, report.source_position);
    bool consistent = snapshot != nullptr;
    if (consistent) {
      report.table_position = *position_of(*snapshot);
      read_binlog(options, charsets, report.table_position.binlog, report.source_position.binlog,
                  [&](const SourceTransaction& txn) {
                    const std::string name = options.table.qualified_name();
                    consistent = std::find(txn.tables.begin(), txn.tables.end(), name) == txn.tables.end() &&
                                 !(txn.schema_change && changes_table(*txn.schema_change, options.table));
                    return consistent;
                  });
    }
    if (!consistent) {
      if (std::chrono::steady_clock::now() >= deadline) {
        fail("reconcile {}: table {} did not reach source position {} within {} s (it is at {})", report.source_table,
             report.iceberg_table, report.source_position.to_string(),
             std::chrono::duration_cast<std::chrono::seconds>(options.wait).count(),
             snapshot ? report.table_position.to_string() : "no snapshot");
      }
      spdlog::info("reconcile {}: the table is behind the source ({}); waiting", report.source_table,
                   report.source_position.to_string());
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    // Both sides in the table's schema as of S (columns by name; promoted types as the table has them).
    const iceberg::Schema* snapshot_schema =
        table.metadata.find_schema(snapshot->schema_id.value_or(table.metadata.current_schema_id));
    if (snapshot_schema == nullptr)
      fail("reconcile {}: snapshot {} has no schema", report.iceberg_table, snapshot->snapshot_id);
    const iceberg::Schema& schema = *snapshot_schema;
    std::optional<tables::RowMapping> mapping;
    try {
      mapping.emplace(source.schema(), &schema, nullptr);
    } catch (const Error& error) {
      fail("reconcile {}: table {} does not have the columns of the source table: {}", report.source_table,
           report.iceberg_table, error.what());
    }
    const RowCollector collector(schema);
    SideRows source_rows;
    for (auto chunk = source.next_chunk(); !chunk.empty(); chunk = source.next_chunk()) {
      for (const ChangeEvent& event : chunk) collector.add(mapping->state_row(*event.after), source_rows);
    }
    report.snapshot_id = snapshot->snapshot_id;
    SideRows table_rows;
    iceberg::scan_rows(
        iceberg::plan_scan(table.metadata, snapshot->snapshot_id), schema,
        [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) { collector.add(row, table_rows); });

    report.source_rows = source_rows.rows;
    report.table_rows = table_rows.rows;
    report.duplicate_keys = table_rows.duplicate_keys + source_rows.duplicate_keys;
    report.source_digest = source_rows.digest.finish();
    report.table_digest = table_rows.digest.finish();
    const auto example = [&](RowDifference difference) {
      if (report.examples.size() < options.max_examples) report.examples.push_back(std::move(difference));
    };
    auto s = source_rows.by_key.begin();
    auto t = table_rows.by_key.begin();
    while (s != source_rows.by_key.end() || t != table_rows.by_key.end()) {
      if (t == table_rows.by_key.end() || (s != source_rows.by_key.end() && s->first < t->first)) {
        ++report.missing;
        example({"missing", s->first, {}, row_text(schema, s->second), ""});
        ++s;
      } else if (s == source_rows.by_key.end() || t->first < s->first) {
        ++report.extra;
        example({"extra", t->first, {}, "", row_text(schema, t->second)});
        ++t;
      } else {
        if (s->second != t->second) {
          RowDifference difference{"different", s->first, {}, row_text(schema, s->second), row_text(schema, t->second)};
          for (std::size_t c = 0; c < s->second.size(); ++c) {
            if (s->second[c] != t->second[c]) difference.columns.push_back(schema.fields()[c].name);
          }
          ++report.different;
          example(std::move(difference));
        }
        ++s;
        ++t;
      }
    }
    if (options.changelog_table) {
      report.audit = audit_changelog(options, catalog, charsets, report.table_position);
    }
    return report;
  }
}

}  // namespace binberg::verify
