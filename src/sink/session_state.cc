#include "sink/session_state.h"

#include <algorithm>

#include "capture/source_position.h"
#include "core/assert.h"
#include "core/error.h"
#include "mysql/gtid.h"
#include "sink/kafka_sink.h"
#include "tables/snapshot_properties.h"

namespace binberg::sink {

bool TableState::committed_before(Partition partition, const std::string& txn_id,
                                  const mysql::BinlogPosition& position) const {
  const auto before = committed_at_open.find(partition);
  if (before == committed_at_open.end()) return false;
  const Progress& last = before->second;
  return last.last_txn == txn_id ||
         (last.last_txn_position && capture::compare_binlog(*last.last_txn_position, position) > 0);
}

void TableState::note_newest(const Coordinates& at, const std::string& gtid) {
  if (!newest || compare(at, *newest) > 0) {
    newest = at;
    newest_gtid = gtid;
  }
}

TableState& SessionState::add_table(const std::string& topic) {
  TableState& table = tables_[topic];
  table.topic = topic;
  return table;
}

TableState& SessionState::table(const std::string& topic) {
  const auto it = tables_.find(topic);
  BINBERG_ASSERT(it != tables_.end(), "topic {} is not one this session reads", topic);
  return it->second;
}

Route SessionState::route(const TableState& table, const ReadRecord& read, const RecordFacts& facts, Arrival arrival,
                          const Ownership& ownership) const {
  const kafka::ConsumedRecord& record = read.record;
  const Partition partition(record.partition);
  if (table.rebuild) {  // a rebuild stops where the original stood
    const auto target = table.rebuild->target.find(partition);
    if (target == table.rebuild->target.end() || Offset(record.offset) >= target->second) {
      return Route::kPastRebuildTarget;
    }
  }
  const auto progress = table.progress.find(partition);
  BINBERG_ASSERT(progress != table.progress.end(), "{} [{}]: a partition the session did not open", record.topic,
                 record.partition);
  if (Offset(record.offset) < progress->second.next_offset) return Route::kRedelivered;
  if (table.schema_change && table.schema_change->offsets.contains(partition)) return Route::kHeld;
  // Before anything may wait: a commit waits for every open transaction, so the record that shows
  // one was abandoned must not wait behind it. But a record behind others of its partition that
  // still wait is checked when its turn comes: until then the partition's current transaction is
  // not the one before it (it would look abandoned).
  if (arrival == Arrival::kHandedBack || !drain_.waiting_in(facts.partition)) {
    if (transactions_.abandoned_by(facts.partition, facts.txn)) return Route::kAbandons;
  }
  // While draining, a transaction newer than the open ones waits, and behind a schema barrier one
  // after the statement; so does all after it in its partition (a record handed back was first).
  if (arrival == Arrival::kHandedBack ? drain_.holds(facts.txn, transactions_)
                                      : drain_.waits(facts.partition, facts.txn, transactions_)) {
    return Route::kWaits;
  }
  if (!facts.txn.id.empty() && ownership.abandoned(facts.txn.id)) return Route::kOfAbandoned;
  if (facts.malformed) return Route::kMalformed;
  if (facts.schema_change) return Route::kSchemaChange;
  return Route::kChange;
}

ChangeAction SessionState::judge_change(const TableState& table, const RecordFacts& facts,
                                        const ChangeEvent& event) const {
  if (facts.replay_of) return ChangeAction{ChangeAction::Kind::kReplay, *facts.replay_of, {}};
  const Coordinates coordinates = coordinates_of(event, facts.key_change);
  const Progress& progress = table.progress.at(Partition(facts.partition.second));
  if (progress.last && compare(coordinates, *progress.last) <= 0) {
    return ChangeAction{ChangeAction::Kind::kRedelivered, {}, coordinates};
  }
  return ChangeAction{ChangeAction::Kind::kApply, {}, coordinates};
}

std::optional<Offset> SessionState::delivered(const envelope::TopicPartition& partition, Offset offset) {
  const auto it = expected_.find(partition);
  BINBERG_ASSERT(it != expected_.end(), "{} [{}] offset {}: a record of a partition the session did not assign",
                 partition.first, partition.second, offset);
  const Offset expected = it->second;
  it->second = std::max(expected, offset.next());
  if (offset > expected) return expected;
  return std::nullopt;
}

Offset SessionState::expected(const envelope::TopicPartition& partition) const {
  const auto it = expected_.find(partition);
  BINBERG_ASSERT(it != expected_.end(), "{} [{}]: a partition the session did not assign", partition.first,
                 partition.second);
  return it->second;
}

bool SessionState::reread_reached(const envelope::TopicPartition& partition, Offset next) {
  const auto it = rereading_.find(partition);
  if (it == rereading_.end() || next < it->second) return false;
  rereading_.erase(it);
  return rereading_.empty();
}

std::map<envelope::TopicPartition, std::int64_t> SessionState::rereading() const {
  std::map<envelope::TopicPartition, std::int64_t> offsets;
  for (const auto& [partition, until] : rereading_) offsets.emplace(partition, until.value);
  return offsets;
}

void SessionState::count(TableState& table, const RecordFacts& facts) {
  if (facts.txn.id.empty()) return;  // a producer without transactions: every record stands alone
  Progress& progress = table.progress_of(Partition(facts.partition.second));
  progress.last_txn = facts.txn.id;
  progress.last_txn_position = facts.txn.position;
  // A footprint entry concerns this session for a table it writes that does not hold its part
  // already: each table is committed in whole transactions, but two tables may have been committed
  // by different sinks (scale-out) or a table by a sink reading only it.
  const auto concerns = [&](const envelope::TopicPartition& where, const std::string& txn_id,
                            const mysql::BinlogPosition& position) {
    const auto other = tables_.find(where.first);
    if (other == tables_.end()) return false;  // another sink's
    return position.file.empty() || !other->second.committed_before(Partition(where.second), txn_id, position);
  };
  const std::optional<envelope::Footprint> whole = transactions_.count(facts.partition, facts.txn, concerns);
  if (whole && facts.txn.id.starts_with("snapshot:")) {  // the source's initial copy: its size per table, for the audit
    for (const auto& [where, records] : *whole) tables_.at(where.first).snapshot_rows += records;
  }
}

void SessionState::advance(TableState& table, const kafka::ConsumedRecord& record) {
  Progress& progress = table.progress_of(Partition(record.partition));
  BINBERG_ASSERT(Offset(record.offset) >= progress.next_offset,
                 "{} [{}]: the next offset moves back from {} to {} (invariant 1: offsets only grow)", record.topic,
                 record.partition, progress.next_offset, record.offset + 1);
  progress.next_offset = Offset(record.offset).next();
  progress.timestamp_ms = record.timestamp_ms;
  offsets_moved_ = true;
}

void SessionState::read_to_end(TableState& table, Partition partition, Offset end) {
  Offset& expected = expected_[{table.topic, partition.value}];
  expected = std::max(expected, end);
  if (drain_.waiting_in({table.topic, partition.value}) ||
      (table.schema_change && table.schema_change->offsets.contains(partition))) {
    return;
  }
  if (mode_ == SessionMode::kRebuild) {
    // A rebuild reaches its target at the partition's end (which may lie past a transaction marker no
    // record can take it over), and never goes past it: what lies beyond was not applied.
    const auto target = table.rebuild->target.find(partition);
    if (target == table.rebuild->target.end()) return;
    end = std::min(end, target->second);
  }
  Progress& progress = table.progress_of(partition);
  if (end <= progress.next_offset) return;
  progress.next_offset = end;
  offsets_moved_ = true;
}

void SessionState::applied(TableState& table, const ChangeEvent& event) {
  const Coordinates at{mysql::BinlogPosition{event.source.file, event.source.end_pos}, event.source.row_index, 0};
  if (!newest_ || compare(at, *newest_) > 0) {
    newest_ = at;
    newest_gtid_ = event.source.gtid;
    newest_commit_ms_ = event.source.commit_ts_ms;
  }
  table.note_newest(at, event.source.gtid);
  table.dirty = true;
  ++pending_changes_;
}

void SessionState::appended_history(TableState& table) {
  table.dirty = true;
  ++pending_changes_;
}

bool SessionState::meet(TableState& table, SchemaChangeRecord statement, const kafka::ConsumedRecord& record) {
  if (!table.schema_change) {
    drain_.raise_barrier(table.topic, statement.position);
    table.schema_change.emplace(MetSchemaChange{std::move(statement), {}, {}});
  } else if (table.schema_change->statement.txn != statement.txn) {
    // A partition holds everything behind the statement it met, so the next one cannot come first.
    fail("{} [{}] offset {}: schema change {} met while {} is not applied in every partition", record.topic,
         record.partition, record.offset, statement.txn, table.schema_change->statement.txn);
  }
  MetSchemaChange& met = *table.schema_change;
  met.offsets[Partition(record.partition)] = Offset(record.offset);
  transactions_.end_in({record.topic, record.partition}, met.statement.txn);
  return met.offsets.size() == met.statement.partitions.size();
}

void SessionState::schema_change_applied(TableState& table, MetSchemaChange& met) {
  for (const auto& [partition, offset] : met.offsets) {
    Progress& progress = table.progress_of(partition);
    BINBERG_ASSERT(offset >= progress.next_offset, "{} [{}]: schema change {} at offset {} below the next offset {}",
                   table.topic, partition, met.statement.txn, offset, progress.next_offset);
    progress.next_offset = offset.next();
    progress.last_txn = met.statement.txn;
    progress.last_txn_position = met.statement.position;
  }
  table.note_newest(Coordinates{met.statement.position, 0, 0}, met.statement.gtid);
  drain_.lift_barrier(table.topic);
  // Held behind the statement in their partitions: handled again in order, once nothing holds them.
  for (ReadRecord& held : met.held) {
    TransactionMark mark = RecordFacts::of(held).txn;
    drain_.wait(std::move(held), std::move(mark));
  }
}

bool SessionState::schema_change_due() const {
  return std::any_of(tables_.begin(), tables_.end(), [](const auto& entry) {
    const std::optional<MetSchemaChange>& met = entry.second.schema_change;
    return met && met->offsets.size() == met->statement.partitions.size();
  });
}

bool SessionState::carry_barrier(const CarriedBarrier& barrier) {
  const auto table = tables_.find(barrier.topic);
  if (table == tables_.end()) return true;  // another sink's now, or stopped: kept for a later session
  for (const auto& [partition, progress] : table->second.committed) {
    if (passed(progress, barrier.position)) return false;  // applied (by another sink meanwhile)
  }
  drain_.raise_barrier(barrier.topic, barrier.position);
  return true;
}

void SessionState::wait(ReadRecord read, const RecordFacts& facts, Arrival arrival) {
  drain_.wait(std::move(read), facts.txn, arrival == Arrival::kHandedBack);
}

bool SessionState::finished() const {
  if (mode_ != SessionMode::kRebuild) return false;
  for (const auto& [topic, table] : tables_) {
    for (const auto& [partition, offset] : table.rebuild->target) {
      const auto progress = table.progress.find(partition);
      if (offset > (progress == table.progress.end() ? Offset() : progress->second.next_offset)) return false;
    }
  }
  return true;
}

bool SessionState::claimable(const TableState& table) const {
  if (!table.newest || table.rebuild) return false;
  for (std::int32_t partition = 0; partition < table.partitions; ++partition) {
    if (!at_end_.contains({table.topic, partition}) || drain_.waiting_in({table.topic, partition})) return false;
  }
  return true;
}

bool SessionState::claim_missing(const TableState& table) const {
  return table.writing && claimable(table) && (!table.claimed || compare(*table.newest, *table.claimed) != 0);
}

bool SessionState::claim_due() const {
  return std::any_of(tables_.begin(), tables_.end(), [&](const auto& entry) { return claim_missing(entry.second); });
}

bool SessionState::commit_due(std::chrono::steady_clock::duration since_commit, std::size_t max_changes,
                              std::chrono::steady_clock::duration interval) const {
  if (drain_.draining() || drain_.anything_ready(transactions_)) return false;
  return pending_changes_ >= max_changes ||
         (since_commit >= interval && (pending_changes_ > 0 || offsets_moved_ || claim_due()));
}

bool SessionState::has_news(const TableState& table) const {
  return table.dirty || progress_json(table.progress) != progress_json(table.committed) || claim_missing(table);
}

std::map<std::string, std::string> SessionState::summary(const TableState& table, const std::string& writer,
                                                         PositionClaim claim) const {
  std::map<std::string, std::string> summary = {{tables::kSinkOffsetsProperty, progress_json(table.progress)},
                                                {tables::kSinkGroupProperty, group_id_},
                                                {tables::kSinkWriterProperty, writer},
                                                {tables::kSinkWriterEpochProperty, std::to_string(table.epoch.value)}};
  if (newest_) {
    summary[tables::kSinkNewestGtidProperty] = newest_gtid_;
    summary[tables::kSinkNewestCommitProperty] = std::to_string(newest_commit_ms_);
  }
  if (table.snapshot_rows != 0) summary[tables::kSnapshotRowsProperty] = std::to_string(table.snapshot_rows);
  if (table.newest) {
    summary[tables::kSinkTableNewestProperty] = table.newest->to_string();
    summary[tables::kSinkTableNewestGtidProperty] = table.newest_gtid;
  }
  if (claim == PositionClaim::kClaimed) {
    BINBERG_ASSERT(table.newest.has_value(), "topic {}: a claim without a change to claim", table.topic);
    const capture::SourcePosition position{table.newest->binlog, table.newest_gtid.empty()
                                                                     ? mysql::GtidPosition{}
                                                                     : mysql::GtidPosition::parse(table.newest_gtid)};
    summary.merge(position.to_summary());
  }
  return summary;
}

void SessionState::check_cut(CommitScope scope, const TableState* only) const {
  if (scope == CommitScope::kAll) {
    BINBERG_ASSERT(transactions_.whole(), "a commit is cut while transaction {} is open (invariant 2)",
                   transactions_.first());
    return;
  }
  // A table committed alone makes a schema change's commit: every transaction before the statement
  // was committed whole just before, in every table, and none after it was applied yet.
  BINBERG_ASSERT(only != nullptr, "a table committed alone names no table");
  BINBERG_ASSERT(transactions_.whole(),
                 "topic {}: its table is committed alone while transaction {} is open (invariant 2)", only->topic,
                 transactions_.whole() ? "" : transactions_.first());
  for (const auto& [topic, table] : tables_) {
    BINBERG_ASSERT(&table == only || !table.dirty,
                   "topic {}: its table is committed alone while table {} holds changes not committed (invariant 2)",
                   only->topic, topic);
  }
}

void SessionState::committed(TableState& table, PositionClaim claim) {
  for (const auto& [partition, progress] : table.committed) {
    const auto now = table.progress.find(partition);
    BINBERG_ASSERT(now != table.progress.end() && now->second.next_offset >= progress.next_offset,
                   "{} [{}]: a commit moves the tables' offset back from {} (invariant 1)", table.topic, partition,
                   progress.next_offset);
  }
  table.committed = table.progress;
  table.dirty = false;
  table.pending_since_ms.clear();
  drain_.for_each([&](const ReadRecord& read) {  // read, not yet applied: still pending
    if (read.record.topic == table.topic) {
      table.pending_since_ms.emplace(Partition(read.record.partition), read.record.timestamp_ms);
    }
  });
  table.claimed = claim == PositionClaim::kClaimed ? table.newest : std::nullopt;
  table.snapshot_rows = 0;
}

void SessionState::commit_done(CommitScope scope) {
  if (scope != CommitScope::kAll) return;
  offsets_moved_ = false;
  pending_changes_ = 0;
}

std::size_t SessionState::held_records() const {
  std::size_t held = 0;
  for (const auto& [topic, table] : tables_) held += table.schema_change ? table.schema_change->held.size() : 0;
  return held;
}

}  // namespace binberg::sink
