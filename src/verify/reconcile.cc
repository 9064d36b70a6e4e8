#include "verify/reconcile.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <thread>

#include "core/assert.h"
#include "core/error.h"
#include "iceberg/canonical_row.h"
#include "iceberg/table_scan.h"
#include "mysql/ddl_statement.h"
#include "mysql/snapshot_reader.h"
#include "tables/table_mapping.h"

namespace binberg::verify {
namespace {

using Cells = std::vector<std::optional<std::string>>;

// A row by its key: the key as text for people, and every column's canonical text.
struct KeyedRow {
  std::string key_text;
  Cells cells;
};

struct SideRows {
  // By the key's unambiguous encoding: texts joined with separators could make two keys one
  // ("a=1, b=2" + "3" and "1" + "2, b=3"). Keyless: by the whole row and its occurrence.
  std::map<std::string, KeyedRow> by_key;
  std::map<std::string, std::uint64_t> occurrences;  // keyless: identical rows so far
  iceberg::RowDigest digest;
  std::uint64_t rows = 0;
  std::uint64_t duplicate_keys = 0;
};

// The unambiguous encoding of CELLS.
std::string encode(const std::vector<const std::optional<std::string>*>& cells) {
  std::string encoded;
  for (const auto* cell : cells) encoded += *cell ? fmt::format("{}:{};", (*cell)->size(), **cell) : std::string("-;");
  return encoded;
}

Cells cells_of(const iceberg::Schema& schema, const iceberg::Row& row) {
  Cells cells;
  for (std::size_t c = 0; c < row.size(); ++c)
    cells.push_back(iceberg::canonical_text(*schema.fields()[c].type, row[c]));
  return cells;
}

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
    Cells cells = cells_of(schema_, row);
    side.digest.add(iceberg::canonical_row_encoding(schema_, row));
    ++side.rows;
    std::vector<const std::optional<std::string>*> key_cells;
    std::string key_text;
    for (std::size_t c : key_columns_) {
      key_cells.push_back(&cells[c]);
      key_text += (key_text.empty() ? "" : ", ") + schema_.fields()[c].name + "=" + cells[c].value_or("NULL");
    }
    std::string key;
    if (key_columns_.empty()) {  // keyless: the n-th of identical rows
      for (const auto& cell : cells) key_cells.push_back(&cell);
      key = encode(key_cells);
      const std::uint64_t occurrence = side.occurrences[key]++;
      key += std::to_string(occurrence);
      key_text = fmt::format("occurrence {} of the row", occurrence + 1);
    } else {
      key = encode(key_cells);
    }
    if (!side.by_key.emplace(std::move(key), KeyedRow{std::move(key_text), std::move(cells)}).second) {
      ++side.duplicate_keys;
    }
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

// True when the DDL statement CHANGE alters or replaces TABLE.
bool changes_table(const SchemaChange& change, const capture::CapturedTable& table) {
  const mysql::DdlStatement ddl = mysql::parse_ddl(change.statement, change.database);
  return std::any_of(ddl.tables.begin(), ddl.tables.end(),
                     [&](const mysql::DdlTable& t) { return t.database == table.database && t.table == table.table; });
}

// The snapshot of the state table that shows the state the source shows at SOURCE_POSITION: the
// latest at or before it, provided no transaction between them touches the table (neither rows
// nor its definition). Null while the table is behind.
const iceberg::Snapshot* consistent_snapshot(const ReconcileOptions& options, const BinlogAccess& access,
                                             const iceberg::LoadedTable& table,
                                             const capture::SourcePosition& source_position) {
  const iceberg::Snapshot* snapshot = snapshot_at_or_before(table, source_position);
  if (snapshot == nullptr) return nullptr;
  bool consistent = true;
  read_binlog(access, position_of(*snapshot)->binlog, source_position.binlog, [&](const SourceTransaction& txn) {
    const std::string name = options.table.qualified_name();
    consistent = std::find(txn.tables.begin(), txn.tables.end(), name) == txn.tables.end() &&
                 !(txn.schema_change && changes_table(*txn.schema_change, options.table));
    return consistent;
  });
  return consistent ? snapshot : nullptr;
}

// Counts, digests and the diff by key of both sides into REPORT.
void diff_rows(const iceberg::Schema& schema, SideRows& source_rows, SideRows& table_rows, std::size_t max_examples,
               ReconcileReport& report) {
  report.source_rows = source_rows.rows;
  report.table_rows = table_rows.rows;
  report.duplicate_keys = table_rows.duplicate_keys + source_rows.duplicate_keys;
  report.source_digest = source_rows.digest.finish();
  report.table_digest = table_rows.digest.finish();
  const auto example = [&](RowDifference difference) {
    if (report.examples.size() < max_examples) report.examples.push_back(std::move(difference));
  };
  auto s = source_rows.by_key.begin();
  auto t = table_rows.by_key.begin();
  while (s != source_rows.by_key.end() || t != table_rows.by_key.end()) {
    if (t == table_rows.by_key.end() || (s != source_rows.by_key.end() && s->first < t->first)) {
      ++report.missing;
      example({"missing", s->second.key_text, {}, row_text(schema, s->second.cells), ""});
      ++s;
    } else if (s == source_rows.by_key.end() || t->first < s->first) {
      ++report.extra;
      example({"extra", t->second.key_text, {}, "", row_text(schema, t->second.cells)});
      ++t;
    } else {
      if (s->second.cells != t->second.cells) {
        RowDifference difference{
            "different", s->second.key_text, {}, row_text(schema, s->second.cells), row_text(schema, t->second.cells)};
        for (std::size_t c = 0; c < s->second.cells.size(); ++c) {
          if (s->second.cells[c] != t->second.cells[c]) difference.columns.push_back(schema.fields()[c].name);
        }
        ++report.different;
        example(std::move(difference));
      }
      ++s;
      ++t;
    }
  }
}

// The source's rows in SCHEMA (columns by name; promoted types as the table has them).
SideRows source_side(mysql::TableSnapshot& source, const iceberg::Schema& schema, const ReconcileReport& report) {
  std::optional<tables::RowMapping> mapping;
  try {
    mapping.emplace(source.schema(), &schema, nullptr);
  } catch (const Error& error) {
    fail("reconcile {}: table {} does not have the columns of the source table: {}", report.source_table,
         report.iceberg_table, error.what());
  }
  const RowCollector collector(schema);
  SideRows rows;
  for (auto chunk = source.next_chunk(); !chunk.empty(); chunk = source.next_chunk()) {
    for (const ChangeEvent& event : chunk) collector.add(mapping->state_row(*event.after), rows);
  }
  return rows;
}

// A keyed table: its current-state rows at SNAPSHOT, in the table's schema as of it.
void compare_state_rows(const ReconcileOptions& options, mysql::TableSnapshot& source,
                        const iceberg::LoadedTable& table, const iceberg::Snapshot& snapshot, ReconcileReport& report) {
  const iceberg::Schema* schema =
      table.metadata.find_schema(snapshot.schema_id.value_or(table.metadata.current_schema_id));
  if (schema == nullptr) fail("reconcile {}: snapshot {} has no schema", report.iceberg_table, snapshot.snapshot_id);
  SideRows source_rows = source_side(source, *schema, report);
  const RowCollector collector(*schema);
  SideRows table_rows;
  iceberg::scan_rows(
      iceberg::plan_scan(table.metadata, snapshot.snapshot_id), *schema,
      [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) { collector.add(row, table_rows); });
  diff_rows(*schema, source_rows, table_rows, options.max_examples, report);
}

// A keyless table: the rows its changelog's events leave at SNAPSHOT (after images in, before
// images out), against the source's, both as multisets. Skipped when the changelog changed its
// schema since the copy: the images of older events lack what was added since.
void compare_replayed_rows(const ReconcileOptions& options, mysql::TableSnapshot& source,
                           const iceberg::LoadedTable& changelog, const iceberg::Snapshot& snapshot,
                           ReconcileReport& report) {
  if (changelog.metadata.schemas.size() > 1) {
    report.skipped.push_back(SkippedCheck{
        "rows",
        "the table has no primary key, and its changelog changed its schema since the initial copy: the row "
        "images of older events lack what was added since, so they do not add up to the current rows"});
    return;
  }
  const iceberg::Schema& schema = changelog.metadata.current_schema();
  // The types the changelog was made with (a wide DECIMAL as text or not), whatever [types] says now.
  tables::TypeMapping held;
  for (const Column& column : source.schema()->columns) {
    if (const iceberg::NestedField* field = schema.find_field(column.name)) {
      held = tables::mapping_held(column, *field->type, held);
    }
  }
  const iceberg::Schema rows_schema = tables::current_state_schema(*source.schema(), held);
  std::vector<std::size_t> after, before;
  for (const iceberg::NestedField& field : rows_schema.fields()) {
    for (const auto& [name, indexes] :
         {std::pair{field.name, &after}, std::pair{std::string(tables::kBeforeImagePrefix) + field.name, &before}}) {
      const auto at = std::find_if(schema.fields().begin(), schema.fields().end(),
                                   [&](const iceberg::NestedField& f) { return f.name == name; });
      if (at == schema.fields().end()) fail("changelog {} has no column {}", changelog.id.to_string(), name);
      indexes->push_back(static_cast<std::size_t>(at - schema.fields().begin()));
    }
  }
  std::map<std::string, std::pair<iceberg::Row, std::int64_t>> net;  // by canonical encoding
  const auto count = [&](const iceberg::Row& row, const std::vector<std::size_t>& image, std::int64_t times) {
    iceberg::Row values;
    for (std::size_t index : image) values.push_back(row[index]);
    auto& entry = net[iceberg::canonical_row_encoding(rows_schema, values)];
    entry.first = std::move(values);
    entry.second += times;
  };
  iceberg::scan_rows(iceberg::plan_scan(changelog.metadata, snapshot.snapshot_id), schema,
                     [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) {
                       const std::string& op = std::get<std::string>(row[1]);
                       if (op == "u" || op == "d") count(row, before, -1);
                       if (op != "d") count(row, after, 1);
                     });
  SideRows source_rows = source_side(source, rows_schema, report);
  const RowCollector collector(rows_schema);
  SideRows table_rows;
  for (const auto& [encoding, entry] : net) {
    for (std::int64_t i = 0; i < entry.second; ++i) collector.add(entry.first, table_rows);
    if (entry.second >= 0) continue;
    // The changelog takes a row out more often than it put it in.
    report.extra += static_cast<std::uint64_t>(-entry.second);
    if (report.examples.size() < options.max_examples) {
      report.examples.push_back({"extra",
                                 "removed more often than added",
                                 {},
                                 "",
                                 row_text(rows_schema, cells_of(rows_schema, entry.first))});
    }
  }
  diff_rows(rows_schema, source_rows, table_rows, options.max_examples, report);
}

}  // namespace

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kEqual:
      return "equal";
    case Verdict::kDifferent:
      return "different";
    case Verdict::kIncomplete:
      return "incomplete";
  }
  BINBERG_UNREACHABLE("verdict {}", static_cast<int>(verdict));
}

Verdict combine(Verdict a, Verdict b) {
  if (a == Verdict::kDifferent || b == Verdict::kDifferent) return Verdict::kDifferent;
  if (a == Verdict::kIncomplete || b == Verdict::kIncomplete) return Verdict::kIncomplete;
  return Verdict::kEqual;
}

Verdict ReconcileReport::verdict() const {
  const bool rows_equal = source_rows == table_rows && duplicate_keys == 0 && missing == 0 && extra == 0 &&
                          different == 0 && source_digest == table_digest;
  if (!rows_equal || (audit && !audit->ok())) return Verdict::kDifferent;
  const bool unaccepted_skip =
      std::any_of(skipped.begin(), skipped.end(), [](const SkippedCheck& check) { return !check.accepted; });
  return unaccepted_skip ? Verdict::kIncomplete : Verdict::kEqual;
}

nlohmann::json ReconcileReport::to_json() const {
  nlohmann::json json;
  json["verdict"] = to_string(verdict());
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
  nlohmann::json skips = nlohmann::json::array();
  for (const SkippedCheck& check : skipped) {
    skips.push_back({{"check", check.check}, {"reason", check.reason}, {"accepted", check.accepted}});
  }
  json["skipped"] = skips;
  if (audit) {
    json["audit"] = {{"source_events", audit->source_events},
                     {"changelog_rows", audit->changelog_rows},
                     {"missing", audit->missing},
                     {"duplicates", audit->duplicates},
                     {"unknown", audit->unknown},
                     {"examples", audit->examples},
                     {"verdict", audit->ok() ? "clean" : "problems"}};
  } else {
    json["audit"] = {{"verdict", "skipped"}};
  }
  json["attempts"] = attempts;
  return json;
}

std::string ReconcileReport::to_text() const {
  std::string verdict_text = to_string(verdict());
  std::transform(verdict_text.begin(), verdict_text.end(), verdict_text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::string text = fmt::format("{} vs {}: {}\n", source_table, iceberg_table, verdict_text);
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
  for (const SkippedCheck& check : skipped) {
    text += fmt::format("  skipped  {}: {}{}\n", check.check, check.reason,
                        check.accepted ? "" : "; not a pass (--no-audit accepts it)");
  }
  return text;
}

ReconcileReport reconcile(const ReconcileOptions& options, iceberg::Catalog& catalog) {
  mysql::Connection connection = mysql::Connection::open(options.source);
  const BinlogAccess access{options.source, options.server_id, mysql::CharsetNames::load(connection)};
  const auto deadline = std::chrono::steady_clock::now() + options.wait;
  for (int attempt = 1;; ++attempt) {
    ReconcileReport report;
    report.attempts = attempt;
    report.source_table = options.table.qualified_name();

    // The source, in one consistent snapshot at P, read by one streamed SELECT: nothing of the
    // keyset paging the initial copy used.
    auto source = mysql::TableSnapshot::open(options.source, options.table.database, options.table.table,
                                             options.chunk_rows, mysql::ReadMethod::kStreamed);
    report.source_position = capture::SourcePosition{source.position().binlog, source.position().gtid};
    const bool keyless = source.schema()->primary_key.empty();
    const iceberg::TableIdentifier& compared = keyless ? options.changelog_table : options.state_table;
    report.iceberg_table = compared.to_string();
    const iceberg::LoadedTable table = catalog.load_table(compared);
    const iceberg::Snapshot* snapshot = consistent_snapshot(options, access, table, report.source_position);
    if (snapshot == nullptr) {
      if (std::chrono::steady_clock::now() >= deadline) {
        const iceberg::Snapshot* behind = snapshot_at_or_before(table, report.source_position);
        fail("reconcile {}: table {} did not reach source position {} within {} s (it is at {})", report.source_table,
             report.iceberg_table, report.source_position.to_string(),
             std::chrono::duration_cast<std::chrono::seconds>(options.wait).count(),
             behind ? position_of(*behind)->to_string() : "no snapshot");
      }
      spdlog::info("reconcile {}: the table is behind the source ({}); waiting", report.source_table,
                   report.source_position.to_string());
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    report.table_position = *position_of(*snapshot);
    report.snapshot_id = snapshot->snapshot_id;
    if (keyless) {
      compare_replayed_rows(options, source, table, *snapshot, report);
    } else {
      compare_state_rows(options, source, table, *snapshot, report);
    }
    if (options.audit == AuditRequest::kRun) {
      AuditOutcome audit = audit_changelog(access, catalog, options.changelog_table, options.table,
                                           report.table_position, options.max_examples);
      report.audit = std::move(audit.audit);
      if (audit.skipped) report.skipped.push_back(std::move(*audit.skipped));
    } else {
      report.skipped.push_back(SkippedCheck{"audit", "not requested (--no-audit)", true});
    }
    BINBERG_ASSERT(report.audit || !report.skipped.empty(), "reconcile {}: the audit neither ran nor was skipped",
                   report.source_table);
    return report;
  }
}

}  // namespace binberg::verify
