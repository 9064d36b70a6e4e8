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
#include "replicate/replicated_tables.h"
#include "tables/schema_change.h"
#include "tables/table_mapping.h"
#include "tables/table_pair.h"

namespace binberg::replicate {
namespace {

constexpr std::chrono::milliseconds kStopCheck{100};  // how often a backoff asks whether to stop

}  // namespace

Replicator::Replicator(ReplicatorOptions options, iceberg::Catalog& catalog)
    : Replicator(std::move(options), catalog, nullptr, system_time()) {
  if (options_.server_id == 0)
    throw ConfigError("replicate: server_id must be set (a replica id unique on the source)");
  own_source_ = mariadb_source(
      MariadbSourceOptions{options_.source, options_.server_id, options_.heartbeat, options_.reader}, reader_metrics_);
  source_ = own_source_.get();
}

Replicator::Replicator(ReplicatorOptions options, iceberg::Catalog& catalog, ReplicatorSource& source, TimeSource& time)
    : Replicator(std::move(options), catalog, &source, time) {}

Replicator::Replicator(ReplicatorOptions options, iceberg::Catalog& catalog, ReplicatorSource* source, TimeSource& time)
    : options_(std::move(options)),
      catalog_(catalog),
      own_registry_(options_.metrics == nullptr ? std::make_unique<metrics::Registry>() : nullptr),
      metrics_(options_.metrics != nullptr ? *options_.metrics : *own_registry_),
      reader_metrics_(metrics_.registry),
      source_(source),
      time_(&time),
      committer_(catalog_, *time_, metrics_) {
  if (options_.tables.empty()) throw ConfigError("replicate: no tables to capture");
}

Replicator::~Replicator() = default;

void Replicator::open_tables() {
  source_->check_ready();
  stats_.stopped_tables.clear();
  tables_ = std::make_unique<ReplicatedTables>(options_, catalog_, *source_, *time_, metrics_);
  for (const capture::CapturedTable& captured : options_.tables) {
    try {
      tables_->open(captured);
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
  if (tables_->empty()) {
    throw ConfigError(
        fmt::format("replicate: no captured table can be replicated: {}", fmt::join(stats_.stopped_tables, "; ")));
  }
}

void Replicator::apply(const SourceTransaction& txn, const std::vector<ChangeEvent>& events, Batch batch) {
  if (batch == Batch::kFirst) {
    ++stats_.transactions;
    metrics_.transactions.add();
    metrics_.source_lag.set(std::max<double>(0, static_cast<double>(time_->unix_millis() - txn.commit_ts_ms) / 1000));
    txn_captured_ = txn_applied_ = false;
  }
  for (const ChangeEvent& event : events) {
    ReplicatedTable* table = tables_->find(event.source.database, event.source.table);
    if (table == nullptr) continue;
    txn_captured_ = true;
    if (table->position && table->position->contains(txn)) continue;  // the table has it already
    // `corrupt` loses this change: the fault every drill and reconcile check must catch.
    if (failpoint::hit("pipeline.apply_event")) continue;
    const tables::RowMapping* mapping = nullptr;
    try {
      mapping = &table->mapping_for(event.schema);
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

namespace {

// The table of DDL that the Iceberg side has not yet seen the statement of TXN applied to; null
// when there is none (the first one: an ALTER TABLE names one table).
ReplicatedTable* schema_change_target(ReplicatedTables& tables, const mysql::DdlStatement& ddl,
                                      const SourceTransaction& txn) {
  for (const mysql::DdlTable& named : ddl.tables) {
    ReplicatedTable* table = tables.find(named.database, named.table);
    if (table != nullptr && !(table->position && table->position->contains(txn))) return table;
  }
  return nullptr;
}

[[noreturn]] void refuse_schema_change(const ReplicatedTable& table, const SchemaChange& change,
                                       const std::string& where, const std::string& why) {
  fail(
      "table {}: schema change at {} refused: {}. binberg stops before it, so nothing is lost; the tables stay at "
      "{}. Statement: {}",
      table.source.qualified_name(), where, why, table.position ? table.position->to_string() : "none",
      change.statement.substr(0, 300));
}

}  // namespace

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
  ReplicatedTable* const target = schema_change_target(*tables_, ddl, txn);
  if (target == nullptr) return;
  if (ddl.kind != mysql::DdlStatement::Kind::kAlterTable) {
    refuse_schema_change(*target, change, where, tables::kNotAnAlterTable);
  }
  ReplicatedTable& table = *target;
  commit(before, CommitScope::kChangedTables);  // rows before the statement: under the old schema
  evolve_schema(table, txn, ddl, where);
  std::vector<iceberg::TableWriter*> writers;
  table.add_writers(writers);
  failpoint::hit("pipeline.before_schema_commit");
  committer_.commit(writers, fmt::format("schema:{}:{}", txn.file, txn.end_pos),
                    std::vector(writers.size(), after.to_summary()));
  table.committed(after, time_->now());
  ++stats_.commits;
}

void Replicator::evolve_schema(ReplicatedTable& table, const SourceTransaction& txn, const mysql::DdlStatement& ddl,
                               const std::string& where) {
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
    refuse_schema_change(table, *txn.schema_change, where, error.what());
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
}

void Replicator::commit(const capture::SourcePosition& position, CommitScope scope) {
  BINBERG_ASSERT(in_flight_ == nullptr, "commit at {} cut inside transaction {} (invariant 1: whole transactions)",
                 position.to_string(), in_flight_ ? in_flight_->id() : "");
  std::vector<iceberg::TableWriter*> writers;
  std::vector<ReplicatedTable*> committed;
  const auto now = time_->now();
  for (auto& table : *tables_) {
    if (table->position && capture::compare_binlog(table->position->binlog, position.binlog) >= 0) {
      // A table ahead of the stream (restart) holds what it has; nothing of it is pending.
      BINBERG_ASSERT(!table->dirty, "table {} has changes pending at {}, behind its position {}",
                     table->source.qualified_name(), position.to_string(), table->position->to_string());
      continue;
    }
    const bool position_due = now - table->last_commit >= options_.commit.idle_position_interval;
    if (!table->dirty && scope != CommitScope::kAllTables && !position_due) continue;
    table->add_writers(writers);
    committed.push_back(table.get());
  }
  if (writers.empty()) return;
  failpoint::hit("pipeline.before_prepare");
  stats_.last_commit_ms = committer_
                              .commit(writers, fmt::format("{}:{}", position.binlog.file, position.binlog.offset),
                                      std::vector(writers.size(), position.to_summary()))
                              .count();
  failpoint::hit("pipeline.after_commit");
  metrics_.commit_events.observe(static_cast<double>(pending_events_));
  for (ReplicatedTable* table : committed) table->committed(position, now);
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
    tables_.reset();
    in_flight_.reset();
    pending_events_ = 0;
    pending_source_commit_ms_ = 0;
    txn_captured_ = txn_applied_ = false;
    metrics_.pending_events.set(0);
  }
}

void Replicator::run_session(const std::function<bool()>& stop) {
  open_tables();
  const std::vector<ReplicatedTable*> new_tables = tables_->without_position();
  if (!new_tables.empty()) tables_->copy_initial(new_tables, committer_, stats_);
  if (stop()) return;

  // Stream from the smallest position any table holds; each table skips what it has.
  const capture::SourcePosition start = tables_->smallest_position();
  std::unique_ptr<StreamInput> source = source_->stream(start);
  spdlog::info("streaming {} tables from {}", tables_->size(), start.to_string());

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
    if (!idle) apply_batch(*batch, read_position);
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

void Replicator::apply_batch(const capture::TransactionBatch& batch, capture::SourcePosition& read_position) {
  const SourceTransaction& txn = *batch.txn;
  const bool first = in_flight_ != batch.txn;
  if (first && in_flight_) fail("source reader: transaction {} began before {} ended", txn.gtid, in_flight_->gtid);
  in_flight_ = batch.txn;
  apply(txn, batch.events, first ? Batch::kFirst : Batch::kLater);
  if (!batch.last) return;
  capture::SourcePosition after = capture::position_after(read_position, batch);
  BINBERG_ASSERT(capture::compare_binlog(after.binlog, read_position.binlog) > 0,
                 "transaction {} ends at {}, not after the stream's position {}", txn.id(), after.to_string(),
                 read_position.to_string());
  in_flight_.reset();                                                     // all its batches are here
  if (txn.schema_change) apply_schema_change(txn, read_position, after);  // DDL carries no rows
  finish(txn);
  read_position = std::move(after);
}

}  // namespace binberg::replicate
