#include "replicate/replicated_tables.h"

#include "core/assert.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "replicate/replicator.h"
#include "tables/table_pair.h"

namespace binberg::replicate {
namespace {

bool never_committed(const tables::TablePair& pair) {
  return pair.changelog->metadata.snapshots.empty() && (!pair.state || pair.state->metadata.snapshots.empty());
}

}  // namespace

std::optional<capture::SourcePosition> committed_position(const iceberg::LoadedTable& table) {
  const iceberg::Snapshot* snapshot = table.metadata.current_snapshot();
  if (snapshot == nullptr) return std::nullopt;
  try {
    return capture::SourcePosition::from_summary(snapshot->summary);
  } catch (const Error& error) {
    fail("table {}: {}", table.id.to_string(), error.what());
  }
}

const tables::RowMapping& ReplicatedTable::mapping_for(const std::shared_ptr<const TableSchema>& rows_schema) {
  if (!mapping || &mapping->source() != rows_schema.get()) {
    mapping.reset();
    mapping.emplace(rows_schema, state ? &state->table().metadata.current_schema() : nullptr,
                    &changelog->table().metadata.current_schema());
  }
  return *mapping;
}

void ReplicatedTable::add_writers(std::vector<iceberg::TableWriter*>& writers) const {
  if (state) writers.push_back(state.get());
  writers.push_back(changelog.get());
}

void ReplicatedTable::committed(const capture::SourcePosition& at, std::chrono::steady_clock::time_point now) {
  // Invariants 3 and 4, checked after the fact: the pair recorded AT, past where it stood.
  BINBERG_ASSERT(!position || capture::compare_binlog(at.binlog, position->binlog) > 0,
                 "table {} moved from {} back to {}", source.qualified_name(), position->to_string(), at.to_string());
  const auto recorded = [&](const iceberg::TableWriter& writer) {
    const std::optional<capture::SourcePosition> held = committed_position(writer.table());
    return held && capture::compare_binlog(held->binlog, at.binlog) == 0;
  };
  BINBERG_ASSERT(recorded(*changelog) && (!state || recorded(*state)),
                 "the tables of {} do not both record the position {} they were committed at", source.qualified_name(),
                 at.to_string());
  position = at;
  dirty = false;
  last_commit = now;
}

ReplicatedTables::ReplicatedTables(const ReplicatorOptions& options, iceberg::Catalog& catalog,
                                   ReplicatorSource& source, TimeSource& time, ReplicatorMetrics& metrics)
    : options_(options), catalog_(catalog), source_(source), time_(time), metrics_(metrics) {}

ReplicatedTable* ReplicatedTables::find(const std::string& database, const std::string& table) {
  for (auto& candidate : tables_) {
    if (candidate->source.database == database && candidate->source.table == table) return candidate.get();
  }
  return nullptr;
}

std::vector<ReplicatedTable*> ReplicatedTables::without_position() const {
  std::vector<ReplicatedTable*> found;
  for (const auto& table : tables_) {
    if (!table->position) found.push_back(table.get());
  }
  return found;
}

capture::SourcePosition ReplicatedTables::smallest_position() const {
  capture::SourcePosition smallest = *tables_.front()->position;
  for (const auto& table : tables_) {
    if (capture::compare_binlog(table->position->binlog, smallest.binlog) < 0) smallest = *table->position;
  }
  return smallest;
}

void ReplicatedTables::open(const capture::CapturedTable& captured) {
  const std::shared_ptr<const TableSchema> now = source_.table_schema(captured.database, captured.table);
  const std::string ns = options_.iceberg_namespace.empty() ? captured.database : options_.iceberg_namespace;
  tables::TablePair pair =
      tables::open_table_pair(catalog_, ns, captured.table, options_.changelog_suffix, now, options_.types);
  // Tables made for the source table and never committed to (a crash before its initial copy's
  // commit) hold nothing. When the source table changed since, they are made again for it: else
  // the copy could not map its rows, and every restart would meet the same old definition.
  if (never_committed(pair) && tables::table_schema_to_json(*pair.schema) != tables::table_schema_to_json(*now)) {
    spdlog::warn("table {} changed before its initial copy was committed: making its empty Iceberg tables again",
                 captured.qualified_name());
    if (pair.state) catalog_.drop_table(pair.state_id);
    catalog_.drop_table(pair.changelog_id);
    pair = tables::open_table_pair(catalog_, ns, captured.table, options_.changelog_suffix, now, options_.types);
  }
  auto table = std::make_unique<ReplicatedTable>();
  table->source = captured;
  static constexpr const char* kOps[] = {"insert", "update", "delete"};
  for (std::size_t op = 0; op < 3; ++op) {
    table->applied[op] = &metrics_.events.counter({captured.qualified_name(), kOps[op]});
  }
  table->state_id = pair.state_id;
  table->changelog_id = pair.changelog_id;
  table->schema = pair.schema;
  std::optional<capture::SourcePosition> position = committed_position(*pair.changelog);
  if (pair.state) {
    const std::optional<capture::SourcePosition> state_position = committed_position(*pair.state);
    // Both tables of a source table always commit together, so their positions agree.
    if (state_position.has_value() != position.has_value() ||
        (position && capture::compare_binlog(position->binlog, state_position->binlog) != 0)) {
      fail("tables {} and {} record different source positions ({} and {}); they were not written together",
           table->state_id.to_string(), table->changelog_id.to_string(),
           state_position ? state_position->to_string() : "none", position ? position->to_string() : "none");
    }
    table->state =
        std::make_unique<iceberg::TableWriter>(std::move(*pair.state), iceberg::WriteMode::kUpsert, options_.writer);
  } else {
    spdlog::warn("table {} has no primary key: binberg keeps its changelog {} only", captured.qualified_name(),
                 table->changelog_id.to_string());
  }
  table->changelog =
      std::make_unique<iceberg::TableWriter>(std::move(*pair.changelog), iceberg::WriteMode::kAppend, options_.writer);
  try {
    table->mapping_for(table->schema);
  } catch (const Error& error) {
    fail(
        "table {}: the Iceberg tables do not hold what source table {} maps to ({}); schema changes made while "
        "binberg was not reading the binlog are not applied automatically",
        table->changelog_id.to_string(), captured.qualified_name(), error.what());
  }
  table->position = position;
  table->last_commit = time_.now();
  if (position) spdlog::info("table {} resumes after {}", captured.qualified_name(), position->to_string());
  tables_.push_back(std::move(table));
}

void ReplicatedTables::copy_initial(const std::vector<ReplicatedTable*>& tables, TableCommitter& committer,
                                    ReplicatorStats& stats) {
  std::vector<mysql::TableName> names;
  std::string listed;
  for (ReplicatedTable* table : tables) {
    if (table->changelog->table().metadata.current_snapshot() != nullptr ||
        (table->state && table->state->table().metadata.current_snapshot() != nullptr)) {
      fail("table {} has snapshots but no source position: it was not written by binberg",
           table->changelog_id.to_string());
    }
    names.push_back(mysql::TableName{table->source.database, table->source.table});
    listed += (listed.empty() ? "" : ", ") + table->source.qualified_name();
  }
  std::unique_ptr<SnapshotInput> source = source_.snapshot(names, options_.snapshot_chunk_rows);
  for (std::size_t i = 0; i < tables.size(); ++i) {
    try {
      tables[i]->mapping_for(source->schemas()[i]);
    } catch (const Error& error) {
      fail("table {} changed while binberg opened it ({}); restart binberg", tables[i]->source.qualified_name(),
           error.what());
    }
  }
  const capture::SourcePosition position = source->position();
  spdlog::info("snapshot of {} at {}", listed, position.to_string());
  auto last_progress = time_.now();
  for (;;) {
    std::vector<ChangeEvent> chunk = source->next_chunk();
    if (chunk.empty()) break;
    ReplicatedTable& table = *find(chunk.front().source.database, chunk.front().source.table);
    table.snapshot_rows += chunk.size();
    metrics_.snapshot_rows.counter({table.source.qualified_name()}).add(static_cast<double>(chunk.size()));
    for (const ChangeEvent& event : chunk) {
      tables::apply_change(table.mapping_for(event.schema), event, table.state.get(), *table.changelog);
    }
    stats.snapshot_rows += chunk.size();
    if (time_.now() - last_progress >= std::chrono::seconds(5)) {
      spdlog::info("snapshot: {} rows read, now {}", source->rows_read(), table.source.qualified_name());
      last_progress = time_.now();
    }
  }
  std::vector<iceberg::TableWriter*> writers;
  std::vector<std::map<std::string, std::string>> summaries;
  for (ReplicatedTable* table : tables) {
    std::map<std::string, std::string> summary = position.to_summary();
    summary[tables::kSnapshotRowsProperty] = std::to_string(table->snapshot_rows);
    table->add_writers(writers);
    summaries.resize(writers.size(), summary);
  }
  committer.commit(writers, fmt::format("snapshot:{}", position.binlog.to_string()), summaries);
  for (ReplicatedTable* table : tables) table->committed(position, time_.now());
  ++stats.commits;
  spdlog::info("snapshot of {} committed: {} rows", listed, source->rows_read());
}

}  // namespace binberg::replicate
