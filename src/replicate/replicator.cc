#include "replicate/replicator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/assert.h"
#include "core/backoff.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/failpoint.h"
#include "iceberg/table_scan.h"
#include "mysql/ddl_statement.h"
#include "tables/schema_change.h"
#include "tables/table_mapping.h"
#include "tables/table_pair.h"

namespace binberg::replicate {
namespace {

constexpr std::chrono::milliseconds kStopCheck{100};  // how often a backoff asks whether to stop

using Clock = std::chrono::steady_clock;

std::optional<capture::SourcePosition> committed_position(const iceberg::LoadedTable& table) {
  const iceberg::Snapshot* snapshot = table.metadata.current_snapshot();
  if (snapshot == nullptr) return std::nullopt;
  try {
    return capture::SourcePosition::from_summary(snapshot->summary);
  } catch (const Error& error) {
    fail("table {}: {}", table.id.to_string(), error.what());
  }
}

bool never_committed(const tables::TablePair& pair) {
  return pair.changelog->metadata.snapshots.empty() && (!pair.state || pair.state->metadata.snapshots.empty());
}

}  // namespace

struct Replicator::Table {
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
  Clock::time_point last_commit;
};

Replicator::Replicator(ReplicatorOptions options, iceberg::Catalog& catalog)
    : options_(std::move(options)),
      catalog_(catalog),
      own_registry_(options_.metrics == nullptr ? std::make_unique<metrics::Registry>() : nullptr),
      metrics_(options_.metrics != nullptr ? *options_.metrics : *own_registry_),
      reader_metrics_(metrics_.registry),
      source_(nullptr),
      time_(&system_time()) {
  if (options_.tables.empty()) throw ConfigError("replicate: no tables to capture");
  if (options_.server_id == 0)
    throw ConfigError("replicate: server_id must be set (a replica id unique on the source)");
  own_source_ = mariadb_source(
      MariadbSourceOptions{options_.source, options_.server_id, options_.heartbeat, options_.reader}, reader_metrics_);
  source_ = own_source_.get();
}

Replicator::Replicator(ReplicatorOptions options, iceberg::Catalog& catalog, ReplicatorSource& source, TimeSource& time)
    : options_(std::move(options)),
      catalog_(catalog),
      own_registry_(options_.metrics == nullptr ? std::make_unique<metrics::Registry>() : nullptr),
      metrics_(options_.metrics != nullptr ? *options_.metrics : *own_registry_),
      reader_metrics_(metrics_.registry),
      source_(&source),
      time_(&time) {
  if (options_.tables.empty()) throw ConfigError("replicate: no tables to capture");
}

Replicator::~Replicator() = default;

Replicator::Table* Replicator::find_table(const std::string& database, const std::string& table) {
  for (auto& candidate : tables_) {
    if (candidate->source.database == database && candidate->source.table == table) return candidate.get();
  }
  return nullptr;
}

const tables::RowMapping& Replicator::mapping_for(Table& table, const std::shared_ptr<const TableSchema>& schema) {
  if (!table.mapping || &table.mapping->source() != schema.get()) {
    table.mapping.reset();
    table.mapping.emplace(schema, table.state ? &table.state->table().metadata.current_schema() : nullptr,
                          &table.changelog->table().metadata.current_schema());
  }
  return *table.mapping;
}

void Replicator::open_tables() {
  source_->check_ready();
  stats_.stopped_tables.clear();
  for (const capture::CapturedTable& captured : options_.tables) {
    try {
      tables_.push_back(open_table(captured));
    } catch (const tables::UnmappableTable& error) {
      // Only this table stops; having no Iceberg tables, it is copied afresh once it can be mapped.
      spdlog::error(
          "table {} is not replicated: {}. binberg creates none of its Iceberg tables, and the other tables go on; "
          "once the table can be mapped, a restart copies it from a snapshot of its own, so nothing is lost",
          captured.qualified_name(), error.what());
      stats_.stopped_tables.push_back(error.what());
    }
  }
  metrics_.stopped_tables.set(static_cast<double>(stats_.stopped_tables.size()));
  if (tables_.empty()) {
    throw ConfigError(
        fmt::format("replicate: no captured table can be replicated: {}", fmt::join(stats_.stopped_tables, "; ")));
  }
}

std::unique_ptr<Replicator::Table> Replicator::open_table(const capture::CapturedTable& captured) {
  const std::shared_ptr<const TableSchema> now = source_->table_schema(captured.database, captured.table);
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
  auto table = std::make_unique<Table>();
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
    mapping_for(*table, table->schema);
  } catch (const Error& error) {
    fail(
        "table {}: the Iceberg tables do not hold what source table {} maps to ({}); schema changes made while "
        "binberg was not reading the binlog are not applied automatically",
        table->changelog_id.to_string(), captured.qualified_name(), error.what());
  }
  table->position = position;
  table->last_commit = time_->now();
  if (position) spdlog::info("table {} resumes after {}", captured.qualified_name(), position->to_string());
  return table;
}

// The initial copy of every table the Iceberg side has no position for: one consistent snapshot
// of them all and one commit, so a source transaction over several of them is in every copy or
// in none, and readers never see a partial copy.
void Replicator::snapshot(const std::vector<Table*>& tables) {
  std::vector<mysql::TableName> names;
  std::string listed;
  for (Table* table : tables) {
    if (table->changelog->table().metadata.current_snapshot() != nullptr ||
        (table->state && table->state->table().metadata.current_snapshot() != nullptr)) {
      fail("table {} has snapshots but no source position: it was not written by binberg",
           table->changelog_id.to_string());
    }
    names.push_back(mysql::TableName{table->source.database, table->source.table});
    listed += (listed.empty() ? "" : ", ") + table->source.qualified_name();
  }
  std::unique_ptr<SnapshotInput> source = source_->snapshot(names, options_.snapshot_chunk_rows);
  for (std::size_t i = 0; i < tables.size(); ++i) {
    try {
      mapping_for(*tables[i], source->schemas()[i]);
    } catch (const Error& error) {
      fail("table {} changed while binberg opened it ({}); restart binberg", tables[i]->source.qualified_name(),
           error.what());
    }
  }
  const capture::SourcePosition position = source->position();
  spdlog::info("snapshot of {} at {}", listed, position.to_string());
  auto last_progress = time_->now();
  for (;;) {
    std::vector<ChangeEvent> chunk = source->next_chunk();
    if (chunk.empty()) break;
    Table& table = *find_table(chunk.front().source.database, chunk.front().source.table);
    table.snapshot_rows += chunk.size();
    metrics_.snapshot_rows.counter({table.source.qualified_name()}).add(static_cast<double>(chunk.size()));
    for (const ChangeEvent& event : chunk) {
      tables::apply_change(mapping_for(table, event.schema), event, table.state.get(), *table.changelog);
    }
    stats_.snapshot_rows += chunk.size();
    if (time_->now() - last_progress >= std::chrono::seconds(5)) {
      spdlog::info("snapshot: {} rows read, now {}", source->rows_read(), table.source.qualified_name());
      last_progress = time_->now();
    }
  }
  std::vector<iceberg::TableWriter*> writers;
  std::vector<std::map<std::string, std::string>> summaries;
  for (Table* table : tables) {
    std::map<std::string, std::string> summary = position.to_summary();
    summary[tables::kSnapshotRowsProperty] = std::to_string(table->snapshot_rows);
    if (table->state) {
      writers.push_back(table->state.get());
      summaries.push_back(summary);
    }
    writers.push_back(table->changelog.get());
    summaries.push_back(summary);
  }
  commit_writers(writers, fmt::format("snapshot:{}", position.binlog.to_string()), summaries);
  for (Table* table : tables) {
    table->position = position;
    table->dirty = false;
    table->last_commit = time_->now();
  }
  ++stats_.commits;
  spdlog::info("snapshot of {} committed: {} rows", listed, source->rows_read());
}

void Replicator::apply(const SourceTransaction& txn, const std::vector<ChangeEvent>& events, Batch batch) {
  if (batch == Batch::kFirst) {
    ++stats_.transactions;
    metrics_.transactions.add();
    metrics_.source_lag.set(std::max<double>(0, static_cast<double>(time_->unix_millis() - txn.commit_ts_ms) / 1000));
    txn_captured_ = txn_applied_ = false;
  }
  for (const ChangeEvent& event : events) {
    Table* table = find_table(event.source.database, event.source.table);
    if (table == nullptr) continue;
    txn_captured_ = true;
    if (table->position && table->position->contains(txn)) continue;  // the table has it already
    // `corrupt` loses this change: the fault every drill and reconcile check must catch.
    if (failpoint::hit("pipeline.apply_event")) continue;
    const tables::RowMapping* mapping = nullptr;
    try {
      mapping = &mapping_for(*table, event.schema);
    } catch (const Error& error) {
      fail(
          "table {}: its rows at {} (transaction {}) do not fit the Iceberg tables ({}); the table changed without a "
          "schema change binberg saw. binberg stops here so nothing is lost",
          table->source.qualified_name(), txn.file + ":" + std::to_string(txn.end_pos), txn.gtid, error.what());
    }
    table->applied[event.op == Op::kUpdate ? 1 : event.op == Op::kDelete ? 2 : 0]->add();
    tables::apply_change(*mapping, event, table->state.get(), *table->changelog);
    table->dirty = true;
    txn_applied_ = true;
    ++stats_.events;
    ++pending_events_;
  }
  metrics_.pending_events.set(static_cast<double>(pending_events_));
}

void Replicator::finish(const SourceTransaction& txn) {
  if (txn_captured_ && !txn_applied_) {
    ++stats_.skipped_transactions;
    metrics_.skipped_transactions.add();
  }
  if (txn_applied_) pending_source_commit_ms_ = txn.commit_ts_ms;
}

// A DDL statement on captured tables (schema_change.h has the policy). It commits what is pending
// first, then evolves the tables' schemas — and fills added columns of existing rows — in one
// commit at AFTER, the position after the statement: the new schema is in exactly the snapshots
// that hold the statement, and a restart before that commit meets the statement again.
void Replicator::apply_schema_change(const SourceTransaction& txn, const capture::SourcePosition& before,
                                     const capture::SourcePosition& after) {
  const SchemaChange& change = *txn.schema_change;
  const std::string where = fmt::format("{}:{} (transaction {})", txn.file, txn.end_pos, txn.gtid);
  mysql::DdlStatement ddl;
  try {
    ddl = mysql::parse_ddl(change.statement, change.database);
  } catch (const Error& error) {
    fail("binlog {}: {}", where, error.what());
  }
  std::vector<Table*> targets;
  for (const mysql::DdlTable& named : ddl.tables) {
    Table* table = find_table(named.database, named.table);
    if (table == nullptr || (table->position && table->position->contains(txn))) continue;
    if (std::find(targets.begin(), targets.end(), table) == targets.end()) targets.push_back(table);
  }
  if (targets.empty()) return;
  const auto stop = [&](const Table& table, const std::string& why) {
    fail(
        "table {}: schema change at {} refused: {}. binberg stops before it, so nothing is lost; the tables stay at "
        "{}. Statement: {}",
        table.source.qualified_name(), where, why, table.position ? table.position->to_string() : "none",
        change.statement.substr(0, 300));
  };
  if (ddl.kind != mysql::DdlStatement::Kind::kAlterTable) {
    stop(*targets.front(), tables::kNotAnAlterTable);
  }
  Table& table = *targets.front();
  commit(before, CommitScope::kChangedTables);  // rows before the statement: under the old schema

  const tables::Acceptance acceptance =
      std::find(options_.accepted_schema_changes.begin(), options_.accepted_schema_changes.end(), txn.id()) !=
              options_.accepted_schema_changes.end()
          ? tables::Acceptance::kByOperator
          : tables::Acceptance::kByPolicy;
  const std::shared_ptr<const TableSchema> now = source_->table_schema(table.source.database, table.source.table);
  tables::EvolvedTables evolved;
  try {
    evolved = tables::evolve_tables(ddl, *table.schema, *now, acceptance, options_.types, table.state.get(),
                                    *table.changelog);
  } catch (const tables::SchemaChangeRefused& error) {
    stop(table, error.what());
  }
  if (acceptance == tables::Acceptance::kByOperator)
    spdlog::warn("table {}: applying schema change at {} as accepted by the operator", table.source.qualified_name(),
                 where);
  if (evolved.changed) {
    table.schema = evolved.source;
    table.mapping.reset();
    if (evolved.filled_rows != 0) table.dirty = true;
    spdlog::info("table {}: schema change at {} applied{}", table.source.qualified_name(), where,
                 evolved.filled_rows == 0
                     ? ""
                     : fmt::format("; {} existing rows given the added columns' values", evolved.filled_rows));
  }
  std::vector<iceberg::TableWriter*> writers;
  if (table.state) writers.push_back(table.state.get());
  writers.push_back(table.changelog.get());
  failpoint::hit("pipeline.before_schema_commit");
  commit_writers(writers, fmt::format("schema:{}:{}", txn.file, txn.end_pos),
                 std::vector(writers.size(), after.to_summary()));
  table.position = after;
  table.dirty = false;
  table.last_commit = time_->now();
  ++stats_.commits;
}

// Prepares every writer, then moves all their tables in one catalog transaction: the atomic
// visibility invariant (a commit is seen in every table it touches, or in none).
std::chrono::milliseconds Replicator::commit_writers(const std::vector<iceberg::TableWriter*>& writers,
                                                     const std::string& commit_id,
                                                     const std::vector<std::map<std::string, std::string>>& summaries) {
  const auto started = time_->now();
  std::vector<iceberg::PreparedCommit> prepared;
  for (std::size_t i = 0; i < writers.size(); ++i) {
    prepared.push_back(writers[i]->prepare(commit_id, summaries[i], time_->unix_millis()));
  }
  failpoint::hit("pipeline.before_commit");
  iceberg::commit_tables(catalog_, writers, prepared);
  const auto duration = time_->now() - started;
  metrics_.commit_duration.observe(std::chrono::duration<double>(duration).count());
  for (const iceberg::PreparedCommit& commit : prepared) {
    metrics_.bytes_written.add(static_cast<double>(commit.stats.bytes_written));
  }
  const double now_s = static_cast<double>(time_->unix_millis()) / 1000;
  if (metrics_.last_commit_time.value() > 0) metrics_.commit_interval.set(now_s - metrics_.last_commit_time.value());
  metrics_.last_commit_time.set(now_s);
  metrics_.commits.add();
  return std::chrono::duration_cast<std::chrono::milliseconds>(duration);
}

void Replicator::commit(const capture::SourcePosition& position, CommitScope scope) {
  BINBERG_ASSERT(in_flight_ == nullptr, "commit at {} cut inside transaction {} (invariant 1: whole transactions)",
                 position.to_string(), in_flight_ ? in_flight_->id() : "");
  std::vector<iceberg::TableWriter*> writers;
  std::vector<Table*> committed;
  const auto now = time_->now();
  for (auto& table : tables_) {
    if (table->position && capture::compare_binlog(table->position->binlog, position.binlog) >= 0) {
      // A table ahead of the stream (restart) holds what it has; nothing of it is pending.
      BINBERG_ASSERT(!table->dirty, "table {} has changes pending at {}, behind its position {}",
                     table->source.qualified_name(), position.to_string(), table->position->to_string());
      continue;
    }
    const bool position_due = now - table->last_commit >= options_.commit.idle_position_interval;
    if (!table->dirty && scope != CommitScope::kAllTables && !position_due) continue;
    if (table->state) writers.push_back(table->state.get());
    writers.push_back(table->changelog.get());
    committed.push_back(table.get());
  }
  if (writers.empty()) return;
  failpoint::hit("pipeline.before_prepare");
  stats_.last_commit_ms = commit_writers(writers, fmt::format("{}:{}", position.binlog.file, position.binlog.offset),
                                         std::vector(writers.size(), position.to_summary()))
                              .count();
  failpoint::hit("pipeline.after_commit");
  metrics_.commit_events.observe(static_cast<double>(pending_events_));
  for (Table* table : committed) {
    // Invariants 3 and 4, checked after the fact: the pair recorded POSITION, past where it stood.
    BINBERG_ASSERT(!table->position || capture::compare_binlog(position.binlog, table->position->binlog) > 0,
                   "table {} moved from {} back to {}", table->source.qualified_name(), table->position->to_string(),
                   position.to_string());
    const auto recorded = [&](const iceberg::TableWriter& writer) {
      const std::optional<capture::SourcePosition> at = committed_position(writer.table());
      return at && capture::compare_binlog(at->binlog, position.binlog) == 0;
    };
    BINBERG_ASSERT(recorded(*table->changelog) && (!table->state || recorded(*table->state)),
                   "the tables of {} do not both record the position {} they were committed at",
                   table->source.qualified_name(), position.to_string());
    table->position = position;
    table->dirty = false;
    table->last_commit = now;
  }
  ++stats_.commits;
  stats_.position = position.to_string();
  if (pending_source_commit_ms_ != 0) {
    stats_.last_source_commit_ms = pending_source_commit_ms_;
    metrics_.committed_source_time.set(static_cast<double>(pending_source_commit_ms_) / 1000);
  }
  spdlog::debug("committed {} events to {} tables at {}", pending_events_, committed.size(), position.to_string());
  pending_events_ = 0;
  metrics_.pending_events.set(0);
}

void Replicator::run(const std::function<bool()>& stop) {
  std::uint32_t conflicts_in_a_row = 0;
  Backoff backoff(std::chrono::milliseconds(500));
  for (;;) {
    const std::uint64_t commits_before = stats_.commits;
    try {
      run_session(stop);
      return;
    } catch (const iceberg::CommitConflict& conflict) {
      // The writers that lost are poisoned and their batch is dropped with them; none of it was
      // published, and the tables' positions say where to resume (invariant 3).
      conflicts_in_a_row = stats_.commits > commits_before ? 1 : conflicts_in_a_row + 1;
      ++stats_.commit_conflicts;
      metrics_.commit_conflicts.add();
      if (conflicts_in_a_row > options_.max_consecutive_conflicts) throw;
      spdlog::warn("{}; another writer committed to the table (maintenance?): reopening the tables and resuming",
                   conflict.what());
    } catch (const iceberg::CatalogUnavailable& unavailable) {
      // The catalog stayed away for its whole retry budget. A commit it left unanswered may have
      // landed: the tables say so, as after a restart (invariant 3), so the session starts over
      // from what they record, never from what this process thinks it committed.
      if (stats_.commits > commits_before) backoff.reset();
      ++stats_.catalog_outages;
      const std::chrono::milliseconds wait = backoff.next();
      spdlog::warn("{}; reopening the tables from the catalog in {} ms", unavailable.what(), wait.count());
      for (auto waited = std::chrono::milliseconds(0); waited < wait && !stop(); waited += kStopCheck) {
        time_->sleep_for(kStopCheck);
      }
      if (stop()) return;  // nothing whole is pending that the tables do not already say
    }
    tables_.clear();
    in_flight_.reset();
    pending_events_ = 0;
    pending_source_commit_ms_ = 0;
    txn_captured_ = txn_applied_ = false;
    metrics_.pending_events.set(0);
  }
}

void Replicator::run_session(const std::function<bool()>& stop) {
  open_tables();
  std::vector<Table*> new_tables;
  for (auto& table : tables_) {
    if (!table->position) new_tables.push_back(table.get());
  }
  if (!new_tables.empty()) snapshot(new_tables);
  if (stop()) return;

  // Stream from the smallest position any table holds; each table skips what it has.
  capture::SourcePosition start = *tables_.front()->position;
  for (const auto& table : tables_) {
    if (capture::compare_binlog(table->position->binlog, start.binlog) < 0) start = *table->position;
  }
  std::unique_ptr<StreamInput> source = source_->stream(start);
  spdlog::info("streaming {} tables from {}", tables_.size(), start.to_string());

  // The position of the stream after the last transaction read, with the GTID position the
  // tables recorded (the reader's GTID state starts empty when streaming from a file position).
  capture::SourcePosition read_position = start;
  in_flight_.reset();
  auto last_commit = time_->now();
  for (;;) {
    // A stop takes effect between transactions only (invariant 1).
    if (!in_flight_ && stop()) break;
    std::optional<capture::TransactionBatch> batch = source->next(options_.heartbeat);
    const bool idle = !batch || !batch->txn;
    if (idle && pending_events_ == 0) metrics_.source_lag.set(0);  // idle and caught up
    if (!idle) {
      const SourceTransaction& txn = *batch->txn;
      const bool first = in_flight_ != batch->txn;
      if (first && in_flight_) fail("source reader: transaction {} began before {} ended", txn.gtid, in_flight_->gtid);
      in_flight_ = batch->txn;
      apply(txn, batch->events, first ? Batch::kFirst : Batch::kLater);
      if (!batch->last) continue;
      capture::SourcePosition after = read_position;
      after.binlog = batch->position;
      if (!txn.gtid.empty()) {
        const mysql::Gtid gtid = mysql::Gtid::parse(txn.gtid);
        if (!after.gtid.contains(gtid)) after.gtid.advance(gtid);
      }
      BINBERG_ASSERT(capture::compare_binlog(after.binlog, read_position.binlog) > 0,
                     "transaction {} ends at {}, not after the stream's position {}", txn.id(), after.to_string(),
                     read_position.to_string());
      in_flight_.reset();                                                     // all its batches are here
      if (txn.schema_change) apply_schema_change(txn, read_position, after);  // DDL carries no rows
      finish(txn);
      read_position = std::move(after);
    }
    // Commits are cut between transactions only (invariant 1): while one's batches are still
    // arriving (the reader paused inside it), the interval may pass, but the commit waits.
    if (in_flight_) continue;
    const bool due = pending_events_ >= options_.commit.max_events ||
                     (pending_events_ > 0 && time_->now() - last_commit >= options_.commit.interval);
    if (due || (idle && time_->now() - last_commit >= options_.commit.interval)) {
      commit(read_position, CommitScope::kChangedTables);
      last_commit = time_->now();
    }
  }
  commit(read_position, CommitScope::kAllTables);  // the savepoint of a graceful stop
  spdlog::info("stopped at {}", read_position.to_string());
}

}  // namespace binberg::replicate
