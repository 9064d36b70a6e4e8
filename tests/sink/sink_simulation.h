#pragma once

// The deterministic simulation of `binberg sink` (the harness: tests/support/simulation.h). One
// seed draws a scenario and drives everything: a simulated source producing transactions into
// simulated topics (exactly-once or at-least-once: partial transactions, repeats, an abandoned
// initial copy, undecodable and mis-keyed records, schema changes, replayed dead letters), one or
// two sinks running the real KafkaSink on simulated ports with a simulated clock (sessions, crashes
// at every commit step, rewinds, a second writer taking a table over), and a real SQLite catalog
// in a temporary folder. After every step the checks of sink_invariants.h read what the catalog
// holds; at the end the source stops faulting and a last sink must bring the tables to every
// change the source made.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/change_event.h"
#include "kafka/consumer.h"
#include "sink/kafka_sink.h"
#include "sink/sink_ports.h"
#include "support/simulation.h"

namespace binberg::sink::simulation {

using testing::SimClock;
using testing::SimRandom;

// Whether the scenarios include what the sink does not handle yet (BINBERG_SIMULATION_KNOWN_DEFECTS
// set): at-least-once sources whose repeated transactions carry undecodable or mis-keyed records,
// mis-keyed records beside replayed dead letters, dead letters replayed after a schema change, and
// dead letters replayed out of source order.
bool known_defects();

// What one seed exercises, drawn from it.
struct Scenario {
  int tables = 1;                        // topics cdc.sim.t0, cdc.sim.t1
  std::vector<std::int32_t> partitions;  // per table
  int keys = 4;                          // per table
  int transactions = 6;                  // the source runs this many, then stops
  bool at_least_once = false;            // the source repeats what it had not saved; crashes mid-transaction
  bool initial_copy = false;             // the tables have rows before capture: the source copies them first
  bool abandoned_copy = false;           // ... and gives its first copy up half-way (at-least-once)
  bool schema_change = false;            // ALTER TABLE t0 ADD COLUMN w INT half-way
  bool two_writers = false;              // scale-out: a second sink takes a table over, the first goes stale
  bool rewind = false;                   // a sink restarts reading from the earliest offsets (--from earliest)
  int damaged_percent = 0;               // records whose value does not decode (dead letters, replayed later)
  int miskeyed_percent = 0;              // records whose key is not their row's (quarantine)
  int crashes = 0;                       // crash points armed (failpoints at every commit step)
  // Retention deletes records of t0's topic under the sinks (never drawn: only the seeds of
  // simulate(seed, Retention::kDeletes) have it), past what the tables applied or not.
  bool deletes_records = false;

  static Scenario draw(SimRandom& random);
  std::string to_string() const;
};

// A record of a simulated topic partition.
struct LogRecord {
  kafka::ConsumedRecord record;      // its offset is its place in the log
  std::optional<ChangeEvent> event;  // the change its value carries; none for a schema change
  bool damaged = false;              // its value does not decode
  std::optional<RowImage> key;       // what its key decodes to
};

// The simulated topics: an append-only log per partition, read by offset.
class Topics {
 public:
  void create(const std::string& topic, std::int32_t partitions);
  std::int32_t partitions(const std::string& topic) const;
  std::int64_t append(LogRecord record);  // its offset
  std::int64_t end(const envelope::TopicPartition& partition) const;
  // Retention: the records below OFFSET are gone for readers (the first offset moves up to it, never
  // past the end); at() still gives them, for the checks.
  void delete_below(const envelope::TopicPartition& partition, std::int64_t offset);
  std::int64_t first(const envelope::TopicPartition& partition) const;
  const LogRecord& at(const envelope::TopicPartition& partition, std::int64_t offset) const;
  std::vector<envelope::TopicPartition> all() const;

 private:
  std::map<envelope::TopicPartition, std::vector<LogRecord>> logs_;
  std::map<envelope::TopicPartition, std::int64_t> first_;
};

// One change the source made, as the checks expect it in the tables.
struct SourceEvent {
  std::string table;  // t0, t1
  ChangeEvent event;
  std::string txn;
};

// The simulated `binberg source`: a source database of one or two tables (id INT primary key,
// v BIGINT: the change's sequence number, so a key's value only grows), its transactions, and
// their records with the headers binberg source gives them (envelope/, publish/kafka_source.cc).
class Source {
 public:
  Source(const Scenario& scenario, SimRandom& random, Topics& topics, SimClock& clock);

  bool done() const { return ran_ >= scenario_.transactions && !in_flight_; }
  // One step of the source: a transaction (or the initial copy, a schema change, a crash with the
  // repeat of what was not saved, a save).
  void step();
  // The source stops: it finishes what it was in the middle of and saves.
  void finish();
  // An operator replays a dead letter (binberg dlq replay): the record it came from, again, marked
  // with kReplayOfHeader.
  void replay(const envelope::TopicPartition& partition, std::int64_t offset);

  const std::map<std::string, SourceEvent>& events() const { return events_; }  // by event id
  const std::set<std::string>& abandoned() const { return abandoned_; }
  // The source tables now: key -> v, per table.
  const std::map<std::string, std::map<std::int64_t, std::int64_t>>& rows() const { return rows_; }
  std::size_t columns(const std::string& table) const;
  bool faults() const { return faults_; }
  void stop_faults() { faults_ = false; }

 private:
  struct Produced {  // a record as the source produces it, before Kafka gives it an offset
    std::string topic;
    std::int32_t partition = 0;
    LogRecord record;
  };
  struct Transaction {
    std::string id;
    std::vector<Produced> records;
  };

  void initial_copy(bool abandon);
  Transaction next_transaction();
  Transaction schema_change_transaction();
  ChangeEvent change(const std::string& table, Op op, std::optional<RowImage> before, std::optional<RowImage> after,
                     std::uint32_t row_index);
  void add(Transaction& txn, const std::string& table, const ChangeEvent& event, const char* key_change);
  // Produces TXN as the source does (holding each partition's last record until the end, which
  // carries the footprint); CUT: the source crashes after that many records (the held ones lost).
  void produce(const Transaction& txn, std::optional<std::size_t> cut = std::nullopt);
  void repeat_unsaved();
  std::int32_t partition_of(const std::string& table, std::int64_t key) const;
  std::string topic_of(const std::string& table) const { return "cdc.sim." + table; }
  RowImage row(const std::string& table, std::int64_t key, std::int64_t v) const;

  const Scenario& scenario_;
  SimRandom& random_;
  Topics& topics_;
  SimClock& clock_;
  std::map<std::string, std::shared_ptr<const TableSchema>> schemas_;
  std::map<std::string, std::map<std::int64_t, std::int64_t>> rows_;
  std::map<std::string, SourceEvent> events_;
  std::set<std::string> abandoned_;
  std::vector<Transaction> history_;      // produced, in order
  std::size_t saved_ = 0;                 // history_[0, saved_) is saved: a restart repeats the rest
  std::optional<Transaction> in_flight_;  // produced in part when the source crashed
  int ran_ = 0;
  std::uint64_t sequence_ = 0;  // v of the next change
  std::uint64_t position_ = 4;  // binlog offset
  bool copied_ = false, changed_schema_ = false, faults_ = true;
};

// Whether retention deletes records under the sinks (Scenario::deletes_records).
enum class Retention { kKeeps, kDeletes };

// Runs the simulation of SEED: draws its scenario, runs it and checks every invariant (throws
// testing::InvariantBroken, or fails the running test, naming what broke).
void simulate(std::uint64_t seed, Retention retention = Retention::kKeeps);

}  // namespace binberg::sink::simulation
