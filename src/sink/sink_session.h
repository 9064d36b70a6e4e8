#pragma once

// One session of `binberg sink`: the I/O shell around SessionState. It opens the tables a sink
// writes and seeks their partitions to the offsets the tables record; for each record it asks the
// state machine what to do (session_state.h) and carries that out: applying a change to the
// tables (TableOutput), sending a record to the dead-letter or quarantine topic, reading what a
// replay is judged by, holding, waiting, rolling back; and it cuts the commits. A session ends when
// its stop condition holds (committing what is whole) or with an exception: the sink then starts a
// new one from what the tables committed (KafkaSink::run).

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "iceberg/catalog.h"
#include "sink/diverter.h"
#include "sink/ownership.h"
#include "sink/session_state.h"
#include "sink/sink_metrics.h"
#include "sink/sink_ports.h"
#include "sink/table_output.h"

namespace binberg::sink {

struct KafkaSinkOptions;
struct KafkaSinkStats;

// A transaction the source abandoned: the session rolls back and reads again without it.
class AbandonedTransaction : public Error {
 public:
  using Error::Error;
};

// A schema change met after a transaction that follows it began: the session rolls back and the next
// one holds the records after the statement back from its start (SinkContext::carried_barrier).
class BehindSchemaChange : public Error {
 public:
  using Error::Error;
};

// What a session shares with the sink that runs it, from one session to the next.
struct SinkContext {
  const KafkaSinkOptions& options;
  iceberg::Catalog& catalog;
  SinkEnvironment& environment;
  SinkMetrics& metrics;
  KafkaSinkStats& stats;
  Ownership& ownership;
  std::optional<CarriedBarrier>& carried_barrier;  // until its statement is applied
};

class SinkSession {
 public:
  explicit SinkSession(SinkContext context);

  // Reads and applies until STOP returns true (asked every time round), commits what is whole and
  // returns. Rebuild mode: returns once every partition reached the original's offsets.
  void run(const std::function<bool()>& stop);

  const SessionState& state() const { return state_; }

 private:
  void open();  // session_open.h

  // Logs that every partition read again (--from) reached the tables' offsets.
  void log_reread_done() const;
  void handle_next();
  void handle(ReadRecord& read, Arrival arrival);
  void handle_change(TableState& table, ReadRecord& read, const RecordFacts& facts);
  // Opens TABLE's Iceberg tables if needed and maps SCHEMA's rows onto them.
  void map_schema(TableState& table, const std::shared_ptr<const TableSchema>& schema,
                  const kafka::ConsumedRecord& record);
  void apply(TableState& table, ChangeEvent event, KeyChange key_change);
  void count(TableState& table, const RecordFacts& facts);
  void replay(TableState& table, const ReadRecord& read, ChangeEvent event, const ReplayOf& replay_of);
  void meet_schema_change(TableState& table, ReadRecord& read, const RecordFacts& facts);
  // Every partition met TABLE's schema change: applies it; the records held behind it wait to be handed back.
  void apply_schema_change(TableState& table);
  // After a commit of every table: applies the schema changes every partition of their table met.
  void apply_due_schema_changes();

  // Commits every table (kAll) or ONLY with what they applied; COMMIT_ID: a generated one.
  void commit(CommitScope scope, TableState* only = nullptr, std::string commit_id = "");
  void report_offsets();
  void update_lag();

  SinkContext sink_;
  const KafkaSinkOptions& options_;
  TimeSource& clock_;
  SessionState state_;
  std::map<std::string, TableOutput> outputs_;  // by topic, beside state_.tables()
  std::unique_ptr<SinkInput> input_;
  std::optional<Diverter> diverter_;  // on input_, once open
  bool reading_ = false;              // the input hands records over (after open)
};

}  // namespace binberg::sink
