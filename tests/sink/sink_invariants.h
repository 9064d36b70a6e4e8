#pragma once

// The invariants of `binberg sink` (docs/architecture.md, kafka_sink.h), checked by the simulation
// against what a real catalog holds: after every step, for each snapshot a sink committed since
// the last step, and at the end of a seed. The numbers are kafka_sink.h's.
//
//   1  offsets live in the tables: each snapshot records every partition's next offset; they only
//      grow, and the current-state table and its changelog commit together (same offsets, same
//      commit)
//   2  whole transactions: a source transaction's changes reach a table in one snapshot (a replayed
//      dead letter stands outside), and the tables it touches in one commit, schema changes
//      included (but for tables two sinks hold)
//   3  redelivery changes nothing: no event is in a changelog twice, each row is the source's
//      change, and the current state is the changelog folded in source order (no key moves back)
//   4  nothing lost to bad input: a diverted record is acknowledged before a commit passes it; at
//      the end every change is in the tables or was diverted
//   5  nothing skipped: a snapshot's offsets never pass a change that is not in its table (applied,
//      or diverted, or of an abandoned transaction) — records retention deleted before a sink read
//      them included; after rewinds, restarts and crashes, at the end every change is in the tables
//      or was diverted (but those of a table stopped at such a gap), and without diversions the
//      tables equal the source
//   6  a replayed dead letter is applied at most once and never moves its key back (3's checks)
//   7  an abandoned transaction is dropped whole: none of its changes is in the tables
//   8  epochs only grow, one writer per epoch
//   9  a snapshot that claims a source position holds every change of its table up to it (but
//      those diverted)

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sink/sink_simulation.h"

namespace binberg::sink::simulation {

// What the sinks sent to `<topic>.dlq` and `<topic>.quarantine`, as the simulated producer saw it.
struct Diversion {
  envelope::TopicPartition partition;
  std::int64_t offset = 0;
  std::string event_id;
  bool dead_letter = false;  // else quarantined
};

class SinkInvariants {
 public:
  SinkInvariants(iceberg::Catalog& catalog, const Scenario& scenario, const Source& source, const Topics& topics);

  // After every step: the snapshots committed since the last one. UNACKNOWLEDGED: what a living
  // sink diverted and its producer has not acknowledged yet.
  void after_step(const std::vector<Diversion>& acknowledged, const std::vector<Diversion>& unacknowledged,
                  const std::set<std::string>& replayed);
  // At the end of a seed, everything read and committed: every change the source made is in the
  // tables once or was diverted; without diversions the tables equal the source; the offsets reached
  // every partition's end. STOPPED: tables a sink stopped at a gap (they stay behind).
  void at_end(const std::vector<Diversion>& acknowledged, const std::set<std::string>& replayed,
              const std::set<std::string>& stopped);

 private:
  struct Table {
    std::string name, topic;
    testing::TableWatch watch;
    std::map<std::int32_t, std::int64_t> offsets;
    std::int64_t epoch = 0;
    std::map<std::int64_t, std::string> writers;  // by epoch
    std::vector<testing::ChangelogRow> changelog;
    std::map<std::string, std::int64_t> transactions;  // the snapshot each transaction reached it in
    std::map<std::int64_t, std::int64_t> newest_v;     // by key: no key moves back
  };
  void check_snapshot(Table& table, const testing::ObservedSnapshot& snapshot,
                      const std::vector<Diversion>& acknowledged, const std::vector<Diversion>& unacknowledged,
                      const std::set<std::string>& replayed);
  void check_rows(Table& table, const testing::ObservedSnapshot& snapshot, const std::set<std::string>& replayed);
  // 5: PREVIOUS -> NOW, the offsets of TABLE's last two snapshots, pass only changes it holds.
  void check_passed(const Table& table, const std::string& where, const std::map<std::int32_t, std::int64_t>& previous,
                    const std::map<std::int32_t, std::int64_t>& now, const std::vector<Diversion>& acknowledged,
                    const std::vector<Diversion>& unacknowledged) const;
  void check_claim(const Table& table, const testing::ObservedSnapshot& snapshot,
                   const std::vector<Diversion>& acknowledged, const std::vector<Diversion>& unacknowledged);
  void check_state(Table& table, const std::vector<iceberg::Row>& rows);

  iceberg::Catalog& catalog_;
  const Scenario& scenario_;
  const Source& source_;
  const Topics& topics_;
  std::map<std::string, Table> tables_;             // by source table
  std::map<std::string, std::string> event_table_;  // event id -> the table whose changelog holds it
  std::map<std::string, std::string> commit_of_;    // by transaction: the commit that brought it first
};

}  // namespace binberg::sink::simulation
