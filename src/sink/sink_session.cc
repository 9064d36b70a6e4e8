#include "sink/sink_session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "capture/source_position.h"
#include "core/assert.h"
#include "core/failpoint.h"
#include "iceberg/table_writer.h"
#include "sink/delivery_checks.h"
#include "sink/diverter.h"
#include "sink/kafka_sink.h"
#include "sink/replay_history.h"
#include "sink/session_open.h"
#include "sink/table_evolution.h"

namespace binberg::sink {
SinkSession::SinkSession(SinkContext context)
    : sink_(context),
      options_(context.options),
      clock_(context.environment.clock()),
      state_(options_.group_id, options_.rebuild.empty() ? SessionMode::kSink : SessionMode::kRebuild) {}

void SinkSession::open() {
  SessionOpening opening(sink_, state_, outputs_);
  const auto existing = opening.existing_tables();
  input_ = sink_.environment.connect(options_);
  diverter_.emplace(*input_, sink_.stats, sink_.metrics);
  const Opening opened = opening.open_tables(existing, *input_);
  if (opened == Opening::kStandby) return;  // until the group gives this sink a topic
  if (opened == Opening::kSeeded) {
    commit(CommitScope::kAll);  // the seed's rows and offsets, before anything read
    for (auto& [topic, table] : state_.tables()) table.committed_at_open = table.committed;
  }
  // Raised before anything is read: nothing after the statement is applied before it this time.
  if (sink_.carried_barrier && !state_.carry_barrier(*sink_.carried_barrier)) sink_.carried_barrier.reset();
  opening.assign_partitions(*input_);
  report_offsets();  // a rewound group shows where the tables are again
  failpoint::hit("sink.after_open");
}

void SinkSession::log_reread_done() const {
  spdlog::info("sink: read again up to the tables' offsets: {} records redelivered, none applied",
               sink_.stats.redelivered_by_offset);
}

void SinkSession::handle(ReadRecord& read, Arrival arrival) {
  const kafka::ConsumedRecord& record = read.record;
  TableState& table = state_.table(record.topic);
  const RecordFacts facts = RecordFacts::of(read);
  const Route route = state_.route(table, read, facts, arrival, sink_.ownership);
  if (route == Route::kPastRebuildTarget) return;
  if (route == Route::kRedelivered) {
    ++sink_.stats.redelivered_by_offset;
    sink_.metrics.redelivered.counter({"offset"}).add();
    if (state_.reread_reached(facts.partition, Offset(record.offset).next())) log_reread_done();
    return;
  }
  table.pending_since_ms.emplace(Partition(record.partition), record.timestamp_ms);  // the first not committed
  switch (route) {
    case Route::kHeld:  // behind a schema change not applied yet
      return table.schema_change->held.push_back(std::move(read));
    case Route::kAbandons: {
      const std::string abandoned = *state_.transactions().abandoned_by(facts.partition, facts.txn);
      sink_.ownership.abandon(abandoned);
      throw AbandonedTransaction(fmt::format(
          "{} [{}] offset {}: transaction {} was abandoned by its source; reading again from the committed offsets "
          "without it",
          record.topic, record.partition, record.offset, abandoned));
    }
    case Route::kWaits:
      return state_.wait(std::move(read), facts, arrival);
    default:
      break;
  }
  ++sink_.stats.records;
  sink_.metrics.records.add();
  switch (route) {
    case Route::kOfAbandoned:
      return state_.advance(table, record);
    case Route::kMalformed:
      diverter_->dead_letter(record, *facts.malformed);
      return state_.advance(table, record);
    case Route::kSchemaChange:
      return meet_schema_change(table, read, facts);
    case Route::kChange:
      return handle_change(table, read, facts);
    default:
      BINBERG_UNREACHABLE("route {} of {} [{}] offset {}", static_cast<int>(route), record.topic, record.partition,
                          record.offset);
  }
}

void SinkSession::handle_change(TableState& table, ReadRecord& read, const RecordFacts& facts) {
  const kafka::ConsumedRecord& record = read.record;
  std::variant<ChangeEvent, std::string> change = take_change(read);
  if (const auto* reason = std::get_if<std::string>(&change)) {
    diverter_->dead_letter(record, *reason);
    count(table, facts);
    return state_.advance(table, record);
  }
  ChangeEvent& event = std::get<ChangeEvent>(change);
  const ChangeAction action = state_.judge_change(table, facts, event);
  switch (action.kind) {
    case ChangeAction::Kind::kReplay:
      replay(table, read, std::move(event), action.replay_of);
      break;
    case ChangeAction::Kind::kRedelivered:
      ++sink_.stats.redelivered_by_position;
      sink_.metrics.redelivered.counter({"position"}).add();
      break;
    case ChangeAction::Kind::kApply:
      map_schema(table, event.schema, record);
      if (const auto problem = key_problem(read, event)) {
        diverter_->quarantine(record, *problem);
      } else {
        apply(table, std::move(event), key_change_from(facts.key_change));
        table.progress_of(Partition(record.partition)).last = action.coordinates;
      }
      count(table, facts);
      break;
  }
  state_.advance(table, record);
}

void SinkSession::map_schema(TableState& table, const std::shared_ptr<const TableSchema>& schema,
                             const kafka::ConsumedRecord& record) {
  TableOutput& output = outputs_.at(table.topic);
  if (!output.is_open()) {
    output.open(schema, table.opened_at);
    table.writing = true;
  }
  output.map(schema, record);
}

// Counts the record towards its transaction; the transaction is whole once its footprint is known
// and every partition this sink reads holds the records the footprint lists.
void SinkSession::count(TableState& table, const RecordFacts& facts) {
  if (facts.txn.id.empty()) return;
  state_.count(table, facts);
  sink_.metrics.open_transactions.set(static_cast<double>(state_.transactions().size()));
}

void SinkSession::apply(TableState& table, ChangeEvent event, KeyChange key_change) {
  state_.applied(table, event);
  outputs_.at(table.topic).apply(std::move(event), key_change);
  ++sink_.stats.applied;
  sink_.metrics.applied.add();
}

// A replayed dead letter (kReplayOfHeader naming its origin), outside every source transaction.
// It is judged by every record a newer change of its key can be in: those after its origin in the
// origin's partition, and in every other partition those since the origin's time, as a key moves
// partition when its key schema changes (its encoding, schema id included, picks the partition);
// the replay's own partition up to the replay, the others to their end.
void SinkSession::replay(TableState& table, const ReadRecord& read, ChangeEvent event, const ReplayOf& replay_of) {
  const kafka::ConsumedRecord& record = read.record;
  const RecordOrigin& origin = replay_of.origin;
  map_schema(table, event.schema, record);
  if (const auto problem = key_problem(read, event)) return diverter_->quarantine(record, *problem);
  const ReplayVerdict verdict = judge_replay_across(replay_history(*input_, record, replay_of), event, origin);
  sink_.metrics.replays.counter({to_string(verdict)}).add();
  spdlog::info("sink: {} [{}] offset {} replays {} (event {}): {}", record.topic, record.partition, record.offset,
               origin.to_string(), event.event_id, to_string(verdict));
  switch (verdict) {
    case ReplayVerdict::kDuplicate:
      ++sink_.stats.replays_duplicate;
      return;
    case ReplayVerdict::kSuperseded:  // the key holds a newer change: history only
      ++sink_.stats.replays_superseded;
      outputs_.at(table.topic).append_history(event);
      return state_.appended_history(table);
    case ReplayVerdict::kApply:
      ++sink_.stats.replays_applied;
      return apply(table, std::move(event), KeyChange::kNone);
  }
}

void SinkSession::meet_schema_change(TableState& table, ReadRecord& read, const RecordFacts& facts) {
  const kafka::ConsumedRecord& record = read.record;
  const SchemaChangeRecord& statement = *facts.schema_change;  // its headers parsed (else kMalformed)
  // Met again (an at-least-once source repeating itself, a rewind): the partition is past it.
  if (passed(table.progress_of(Partition(record.partition)), statement.position)) {
    ++sink_.stats.redelivered_by_position;
    sink_.metrics.redelivered.counter({"position"}).add();
    return state_.advance(table, record);
  }
  if (!table.schema_change) {
    if (const std::optional<std::string> after = state_.transactions().open_after(statement.position)) {
      sink_.carried_barrier = CarriedBarrier{table.topic, statement.position};
      throw BehindSchemaChange(fmt::format(
          "{} [{}] offset {}: schema change {} met after transaction {}, which follows it, began in this session; "
          "reading again from the committed offsets with the changes after the statement held from the start",
          record.topic, record.partition, record.offset, statement.txn, *after));
    }
  }
  state_.meet(table, statement, record);  // applied once every partition met it (run)
}

// Right after a commit of every table, which held every transaction before the statement whole (its
// schema barrier held those after it back), the statement evolves the tables, as in path A
// (evolve_tables), in a commit of its own whose offsets pass its records: the snapshot that first
// holds the statement is the first with the new schema, and a crash before that commit meets it
// again. A statement the policy refuses stops the table before it (TableStopped: the other tables
// go on), at every start, until the operator accepts it.
void SinkSession::apply_schema_change(TableState& table) {
  MetSchemaChange met = std::move(*table.schema_change);
  table.schema_change.reset();
  const SchemaChangeRecord& statement = met.statement;
  TableOutput& output = outputs_.at(table.topic);
  if (!output.is_open() && output.changelog_id()) {
    output.open_recorded(table.opened_at);
    table.writing = true;
  }
  if (output.is_open()) evolve_table(output, table, met, options_.accepted_schema_changes);
  // Without tables yet there is nothing to evolve: the first change makes them with its schema.
  state_.schema_change_applied(table, met);
  if (output.is_open()) {
    table.dirty = true;
    failpoint::hit("sink.before_schema_commit");
    commit(CommitScope::kOneTable, &table, fmt::format("sink:{}:schema:{}", options_.group_id, statement.txn));
  }
  if (sink_.carried_barrier && sink_.carried_barrier->topic == table.topic) sink_.carried_barrier.reset();
  ++sink_.stats.schema_changes;
  sink_.metrics.schema_changes.add();
}

void SinkSession::apply_due_schema_changes() {
  for (auto& [topic, table] : state_.tables()) {
    const std::optional<MetSchemaChange>& met = table.schema_change;
    if (met && met->offsets.size() == met->statement.partitions.size()) apply_schema_change(table);
  }
}

void SinkSession::commit(CommitScope scope, TableState* only, std::string commit_id) {
  state_.check_cut(scope, only);
  const auto started = clock_.now();
  std::vector<iceberg::TableWriter*> writers;
  std::vector<iceberg::PreparedCommit> prepared;
  std::vector<std::pair<TableState*, PositionClaim>> committed;
  input_->flush_diverted();  // dead letters are safe before the offsets move past them (invariant 4)
  if (commit_id.empty()) {
    commit_id = fmt::format("sink:{}:{}-{}", options_.group_id, clock_.unix_millis(), state_.next_commit_sequence());
  }
  for (auto& [topic, table] : state_.tables()) {
    if (!table.writing || (only != nullptr && &table != only)) continue;  // no table yet to hold offsets
    // Every snapshot committed while the table is caught up claims its position, a rewrite of
    // older keys (a replay) included; one that only claims is committed when none does yet.
    const PositionClaim claim = state_.claimable(table) ? PositionClaim::kClaimed : PositionClaim::kNone;
    if (!state_.has_news(table)) continue;
    outputs_.at(topic).prepare(commit_id, state_.summary(table, sink_.ownership.writer(), claim), clock_.unix_millis(),
                               writers, prepared);
    committed.emplace_back(&table, claim);
  }
  if (writers.empty()) return state_.commit_done(scope);
  failpoint::hit("sink.before_commit");
  const auto prepared_at = clock_.now();
  iceberg::commit_tables(sink_.catalog, writers, prepared);
  failpoint::hit("sink.after_commit");
  spdlog::debug("sink: committed {} changes to {} tables: files {} ms, catalog {} ms", state_.pending_changes(),
                committed.size(), std::chrono::duration_cast<std::chrono::milliseconds>(prepared_at - started).count(),
                std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - prepared_at).count());
  for (const auto& [table, claim] : committed) {
    state_.committed(*table, claim);
    sink_.ownership.committed(table->topic, table->epoch);
  }
  report_offsets();
  ++sink_.stats.commits;
  sink_.metrics.commits.add();
  state_.commit_done(scope);
}

void SinkSession::update_lag() {
  sink_.metrics.report_lag(state_, *input_, clock_.unix_millis(),
                           reading_ ? std::optional(input_->queued()) : std::nullopt);  // none yet while opening
}

// For monitoring only (kafka-consumer-groups shows the lag); a start reads the tables' offsets.
void SinkSession::report_offsets() {
  std::vector<kafka::PartitionStart> offsets;
  for (const auto& [topic, table] : state_.tables()) {
    for (const auto& [partition, progress] : table.committed) {
      offsets.push_back(kafka::PartitionStart{topic, partition.value, progress.next_offset.value});
    }
  }
  update_lag();
  if (offsets.empty()) return;
  try {
    input_->report_offsets(offsets);
  } catch (const Error& error) {
    spdlog::warn("sink: {} (the tables hold the offsets; only monitoring misses them)", error.what());
  }
}

// Handles one waiting record that nothing holds any more, else the next item the input reads.
void SinkSession::handle_next() {
  if (std::optional<ReadRecord> ready = state_.take_ready()) {
    handle(*ready, Arrival::kHandedBack);
  } else if (std::optional<ReadItem> item = input_->next(options_.poll_timeout)) {
    if (auto* end = std::get_if<kafka::PartitionEnd>(&*item)) {
      DeliveryChecks(state_, *input_).end(*end);
      state_.at_end({end->topic, end->partition});
      if (end->offset >= 0) {
        state_.read_to_end(state_.table(end->topic), Partition(end->partition), Offset(end->offset));
        if (state_.reread_reached({end->topic, end->partition}, Offset(end->offset))) log_reread_done();
      }
    } else {
      ReadRecord& read = std::get<ReadRecord>(*item);
      state_.read_in({read.record.topic, read.record.partition});
      DeliveryChecks(state_, *input_).record(read.record);
      handle(read, Arrival::kRead);
    }
  }
}

void SinkSession::run(const std::function<bool()>& stop) {
  open();
  input_->start_reading(state_.rereading());
  reading_ = true;
  auto last_commit = clock_.now(), last_lag = clock_.now(), draining_since = clock_.now();
  bool stop_requested = false, stopping = false;
  Drain& drain = state_.drain();
  for (;;) {
    // stop() is asked every time round (scale-out serves the group's callbacks in it, draining too).
    stop_requested = stop() || stop_requested || state_.finished();
    // A drain begins only once the records that waited through the last one are handled again (one
    // per round, without reading: this takes little time); those a schema barrier holds stay, and
    // are read again at the next start.
    if (!stopping && stop_requested && !state_.anything_ready()) {
      stopping = true;
      state_.begin_drain();
      draining_since = clock_.now();
    }
    handle_next();
    if (clock_.now() - last_lag >= std::chrono::seconds(1)) {
      update_lag();
      last_lag = clock_.now();
    }
    // A schema change met in every partition of its table is applied after a commit of every table.
    if (state_.commit_due(clock_.now() - last_commit, options_.commit.max_events, options_.commit.interval) ||
        (!drain.draining() && state_.schema_change_due())) {
      state_.begin_drain();
      draining_since = clock_.now();
    }
    if (drain.draining() && state_.transactions().whole()) {
      commit(CommitScope::kAll);
      last_commit = clock_.now();
      drain.end();
      apply_due_schema_changes();
      if (stopping) {
        sink_.stats.rebuilt = state_.finished();
        return;
      }
    } else if (drain.draining() && clock_.now() - draining_since >= std::chrono::seconds(30)) {
      DeliveryChecks(state_, *input_).partition_starts();
      spdlog::warn("sink: waiting {} s for {} transactions to arrive whole (first: {})",
                   std::chrono::duration_cast<std::chrono::seconds>(clock_.now() - draining_since).count(),
                   state_.transactions().size(), state_.transactions().first());
      if (stopping) return;  // what is not whole is read again at the next start
      draining_since = clock_.now();
    }
  }
}

}  // namespace binberg::sink
