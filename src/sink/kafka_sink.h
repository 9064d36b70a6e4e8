#pragma once

// Path B, second half: `binberg sink`, Kafka -> Iceberg. Reads the change records of `binberg
// source` (or any producer of the same envelope) from its topics and keeps, per source table, the
// current-state and changelog Iceberg tables of path A (table_pair.h).
//
// Invariants and where they are kept:
//   1. Offsets live in the tables. Every snapshot of a table records, for each partition of its
//      topic, the next offset it has applied and the coordinates of the last change it applied
//      (kSinkOffsetsProperty). A start seeks every partition to the offsets the tables record —
//      not to a consumer group's — so nothing is applied twice and nothing skipped.
//   2. Whole source transactions. The last record of a transaction in each partition carries the
//      transaction's footprint (envelope/transaction_footprint.h); a commit is cut only when every
//      transaction the writers hold has all of its records (draining: records of transactions
//      that begin meanwhile wait), so no snapshot holds part of a source transaction, and the
//      tables one transaction touches are committed in one catalog transaction (transactions.h);
//      a schema change is applied in a commit of its own right after a commit of every table,
//      while a schema barrier holds back every transaction after it (SinkSession::apply_schema_change).
//   3. Redelivery changes nothing. A record below a partition's recorded offset (a rewind) and a
//      record whose change is not newer than the last one the partition applied (an at-least-once
//      source producing again) are counted and skipped. A key's changes are in one partition, in
//      order, so no key's state moves backwards.
//   4. Nothing is lost to bad input. A record that cannot be decoded goes to `<topic>.dlq` with
//      its bytes, headers, origin and the error; a record whose key is not the key of its row
//      goes to `<topic>.quarantine`. Both are acknowledged by the broker before the commit that
//      moves the offsets past them.
//   5. Nothing is skipped. The consumer never jumps (auto.offset.reset = error). A partition that
//      starts past a table's recorded offset (retention deleted records it needs) or ends below
//      it (the topic was deleted and made again) stops that table with an error naming topic,
//      partition and offsets (TableStopped: the other tables go on, nothing of it is committed
//      past the gap); so does a record delivered past the expected offset when the skipped
//      records were deleted (transaction markers and aborted records are skipped legitimately).
//      A `read_from` past a table's offsets stops the sink with an error.
//   6. A replayed dead letter (`binberg dlq replay`, kReplayOfHeader) is applied at most once and
//      never moves its key back: the records of its partition between its origin and itself say
//      whether it repeats a replay (skipped) or its key has a newer change (changelog only). It
//      stands outside the source's transactions: the one way a transaction reaches the tables in
//      two snapshots is that one of its records was a dead letter an operator replayed later.
//   7. A transaction the source abandoned (an at-least-once source that crashed in a snapshot
//      and took a new one) is dropped whole: the session rolls back to the committed tables and
//      reads again without it. It is recognized before any record may wait for a commit, since
//      that commit waits for the abandoned transaction (OpenTransactions::abandoned_by).
//   8. One writer per table at a time. Every snapshot names the sink process that wrote it and
//      its writer epoch (kSinkWriterProperty, kSinkWriterEpochProperty). A sink takes a table over
//      with a commit at the epoch after the table's (a claim: the first commit after the table was
//      assigned to it); a sink that finds a newer epoch than its own in a table it writes was
//      replaced there and stops writing it (fenced). Together with the catalog's compare-and-swap
//      (a commit built on an older snapshot fails) no two sinks' commits interleave in one table,
//      and none moves a table back (ownership.h, SessionOpening::open_table, KafkaSink::take_slots).
//   9. A snapshot claims a source position (that of the newest change its table holds) only when
//      every partition of the table's topic was read to its end (SessionState::claimable): then no
//      older change of the table can be outside it. `binberg reconcile` compares such snapshots.

// The sink is a pure state machine in a thin I/O shell: SessionState (session_state.h) decides
// what each record is and what a commit records, Ownership (ownership.h) holds claims and epochs
// across sessions, and SinkSession (sink_session.h) carries the decisions out against the ports
// (sink_ports.h: Kafka, the clock) and the catalog (TableOutput). Where each invariant is asserted
// and which simulation exercises it: docs/architecture.md.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/captured_table.h"
#include "iceberg/catalog.h"
#include "iceberg/table_writer.h"
#include "kafka/client_config.h"
#include "metrics/metrics.h"
#include "registry/registry_client.h"
#include "sink/dead_letter_topics.h"
#include "sink/ownership.h"
#include "sink/progress.h"
#include "sink/sink_metrics.h"
#include "sink/transactions.h"
#include "tables/snapshot_properties.h"
#include "tables/table_mapping.h"

namespace binberg::sink {

class SinkEnvironment;
class SlotSource;

// What the rebuild of one topic's tables starts from and where it stops (planned by
// sink/sink_rebuild.h).
struct SinkRebuildTopic {
  iceberg::TableIdentifier original_changelog;
  std::optional<iceberg::TableIdentifier> original_state;
  // The original's commit the rebuild starts from (its rows are copied); none: empty tables.
  std::optional<std::int64_t> seed_changelog_snapshot, seed_state_snapshot;
  std::string seed_offsets = "{}";  // the seed's kSinkOffsetsProperty
  // Where the original stood when the rebuild was planned: its snapshots (to compare with) and
  // their next offset per partition (the rebuild stops there).
  std::optional<std::int64_t> target_changelog_snapshot, target_state_snapshot;
  PartitionOffsets target;
};

inline constexpr std::int64_t kEarliestOffset = -2;  // read_from: each partition's first offset

struct KafkaSinkOptions {
  kafka::ClientOptions kafka;
  registry::RegistryOptions registry;
  std::vector<std::string> topics;
  std::string group_id = "binberg-sink";  // the sink's identity (consumer group, summaries)
  std::string iceberg_namespace;          // empty: each table's source database
  std::string changelog_suffix = "_changelog";
  capture::CommitPolicy commit;
  iceberg::TableWriterOptions writer;
  metrics::Registry* metrics = nullptr;
  std::chrono::milliseconds poll_timeout{100};
  std::size_t queue_records = 65'536;          // records read and decoded ahead of applying them
  std::uint32_t max_consecutive_failures = 0;  // 0: retry forever
  // Reading starts at this offset of every partition (kEarliestOffset: its first) instead of at
  // the offsets the tables record, which it may not pass; what the tables hold is read again and
  // counted as redelivered.
  std::optional<std::int64_t> read_from;
  // Rebuild mode, by topic: fresh tables in iceberg_namespace, seeded from an original commit and
  // read up to the original's offsets; run() returns there.
  std::map<std::string, SinkRebuildTopic> rebuild;
  // Scale-out: the sinks of one group share the tables. Each topic is a slot (a partition of the
  // group's `<group_id>.slots` topic, in the order of the sorted topics); the group's cooperative
  // rebalancing gives each sink some slots, and a sink writes the tables of its slots only.
  bool scale_out = false;
  std::chrono::milliseconds member_timeout{10'000};  // a silent sink's slots go to the others then
  // And those of a sink whose loop is stuck this long (Kafka's max.poll.interval.ms), or whose
  // sessions fail this long without a commit (a catalog it cannot reach): it leaves the group, and
  // joins again once its catalog answers.
  std::chrono::milliseconds stall_timeout{300'000};
  std::int16_t replication_factor = 1;  // of the slots topic
  DeadLetterTopicOptions dead_letters;  // `<topic>.dlq` and `<topic>.quarantine`
  // Schema changes the operator accepted though the policy refuses them (schema_change.h), by
  // source transaction (GTID, else <file>:<pos>), as `binberg sink --accept-schema-change`.
  std::vector<std::string> accepted_schema_changes;
  // [types]: what the tables created get for source types with no exact Iceberg type; a table
  // binberg cannot map stops alone, as at a refused schema change.
  tables::TypeMapping types;
};

struct KafkaSinkStats {
  std::uint64_t records = 0;                  // read
  std::uint64_t applied = 0;                  // changes applied to the tables
  std::uint64_t redelivered_by_offset = 0;    // below a partition's recorded offset
  std::uint64_t redelivered_by_position = 0;  // a change the partition had applied already
  std::uint64_t dead_letters = 0;
  std::uint64_t quarantined = 0;
  std::uint64_t truncated_diversions = 0;  // dead letters and quarantined records too large to divert whole
  // Replayed dead letters: applied; only logged (the key holds a newer change); a replay again.
  std::uint64_t replays_applied = 0, replays_superseded = 0, replays_duplicate = 0;
  std::uint64_t commits = 0;
  std::uint64_t schema_changes = 0;         // DDL statements applied to the tables
  std::uint64_t rollbacks = 0;              // sessions started over (abandoned transactions, failures)
  std::uint64_t fenced = 0;                 // tables another sink claimed after this one (it stopped writing them)
  std::uint64_t left_group = 0;             // scale-out: times it left its group after stall_timeout without a commit
  std::vector<std::string> stopped_tables;  // topics whose tables stopped: a refused schema change, unmappable
  bool rebuilt = false;                     // rebuild mode: the target offsets were reached and committed
};

class KafkaSink {
 public:
  // On Kafka, the schema registry and the system clock.
  KafkaSink(KafkaSinkOptions options, iceberg::Catalog& catalog);
  // On ENVIRONMENT (a simulation's), which must outlive the sink.
  KafkaSink(KafkaSinkOptions options, iceberg::Catalog& catalog, SinkEnvironment& environment);
  ~KafkaSink();

  // Reads and applies until STOP returns true (checked at least every poll timeout), commits
  // what is whole and returns. A session that fails on an operating error (a connection lost, a
  // commit conflict, a Kafka or registry error) starts over from the committed tables; a
  // ConfigError ends the run; a broken invariant aborts the process (core/assert.h).
  void run(const std::function<bool()>& stop);

  const KafkaSinkStats& stats() const { return stats_; }

 private:
  KafkaSink(KafkaSinkOptions options, iceberg::Catalog& catalog, std::unique_ptr<SinkEnvironment> owned,
            SinkEnvironment* borrowed);
  // Scale-out: takes the slots SLOTS holds now; true when the topics this sink writes changed.
  bool take_slots(SlotSource& slots);
  // After a failed session: waits BACKOFF (serving the group), false when STOP came meanwhile.
  bool back_off(std::chrono::milliseconds backoff, const std::function<bool()>& stop, SlotSource* slots);
  // Scale-out, after stall_timeout of failed sessions (LAST the latest error): leaves the group
  // (SLOTS reset: its tables go to the other sinks) and waits until the catalog answers again;
  // false when STOP came meanwhile.
  bool leave_group(std::unique_ptr<SlotSource>& slots, const std::function<bool()>& stop, const Error& last);

  KafkaSinkOptions options_;
  iceberg::Catalog& catalog_;
  std::unique_ptr<SinkEnvironment> own_environment_;
  SinkEnvironment& environment_;
  std::unique_ptr<metrics::Registry> own_registry_;
  SinkMetrics metrics_;
  KafkaSinkStats stats_;
  Ownership ownership_;
  // A schema barrier a session rolled back for, kept for the next (SinkContext::carried_barrier).
  std::optional<CarriedBarrier> carried_barrier_;
};

}  // namespace binberg::sink
