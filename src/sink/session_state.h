#pragma once

// A sink session's state machine (pure: no I/O, the time comes in as an argument). For each record
// it computes where the record goes (route, judge_change) and it records what the shell did with
// it: the progress of every partition, the coordinates of the newest changes, the transactions
// under way and the drain (transactions.h), the schema change a table's partitions are meeting,
// what each table's next commit records (summary) and what a landed commit moves (committed). The
// shell (sink_session.h) carries the actions out against Kafka and the catalog.
//
// Its invariants, asserted where the state changes (the numbers are kafka_sink.h's):
//   - a partition's next offset only grows, and so does what the tables committed of it (1, 3);
//   - a commit of every table is cut only when every transaction is whole; a table is committed
//     alone only for a schema change, when no transaction is open and no other table holds
//     changes not committed (2);
//   - a table's writer epoch never goes back (8).

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "sink/ownership.h"
#include "sink/progress.h"
#include "sink/record_judgement.h"
#include "sink/transactions.h"

namespace binberg::sink {

struct SinkRebuildTopic;

// How a record reaches the session: from the reader, or handed back after it waited for a commit
// (draining) or behind a schema change.
enum class Arrival { kRead, kHandedBack };

// Where a record goes, judged in this order.
enum class Route {
  kPastRebuildTarget,  // rebuild mode: past the offsets the original stood at (left alone)
  kRedelivered,        // below its partition's next offset: applied before
  kHeld,               // behind a schema change not every partition of its topic met yet
  kAbandons,           // shows its partition's current transaction was abandoned: roll back
  kWaits,              // draining: a newer transaction waits for the commit
  kOfAbandoned,        // of a transaction dropped whole: passed over
  kMalformed,          // its headers do not parse (RecordFacts::malformed): a dead letter standing alone
  kSchemaChange,       // a DDL statement's record
  kChange,             // a change: decoded, then judged (judge_change)
};

// What becomes of a change record that decoded.
struct ChangeAction {
  enum class Kind { kReplay, kRedelivered, kApply };
  Kind kind = Kind::kApply;
  ReplayOf replay_of;       // kReplay: the dead letter it replays
  Coordinates coordinates;  // kApply
};

// A DDL statement met in some partitions of a table's topic. The records behind it in those
// partitions are held until every partition met it (then each has handed over all changes before
// it) and it is applied: the tables never mix changes from either side of it. From its first
// partition on, it raises a schema barrier (Drain): the records of every topic after it wait too.
struct MetSchemaChange {
  SchemaChangeRecord statement;
  std::map<Partition, Offset> offsets;  // of its record, in the partitions that met it
  std::deque<ReadRecord> held;          // read behind it there, in order
};

// What a session knows of one table (its Iceberg side is TableOutput).
struct TableState {
  std::string topic;
  std::int32_t partitions = 1;
  PartitionProgress committed, progress;
  // What was committed before this session (committed_before); `committed` moves on with it.
  PartitionProgress committed_at_open;
  bool writing = false;  // its Iceberg tables are open: commits record its offsets there
  bool dirty = false;    // changes applied since the last commit
  // The newest change applied to these tables (kSinkTableNewestProperty), and the one the
  // committed snapshot claims as its source position, if it claims one.
  std::optional<Coordinates> newest, claimed;
  std::string newest_gtid;
  // By partition: when the first record read past the committed offset was written to Kafka.
  std::map<Partition, std::int64_t> pending_since_ms;
  const SinkRebuildTopic* rebuild = nullptr;  // rebuild mode: where it starts and stops
  Epoch epoch;                                // the writer epoch its commits carry
  // The changelog snapshot the session read the offsets from (none: no table or no snapshot yet).
  std::optional<std::int64_t> opened_at;
  std::uint64_t snapshot_rows = 0;  // of the source's initial copy, read whole since the last commit
  std::optional<MetSchemaChange> schema_change;

  Progress& progress_of(Partition partition) { return progress[partition]; }
  // The next offset of PARTITION the table needs (0 before its first), without adding the partition.
  Offset needed_from(Partition partition) const {
    const auto it = progress.find(partition);
    return it == progress.end() ? Offset() : it->second.next_offset;
  }
  // Whether the records of transaction TXN_ID (one of whose changes is at POSITION) in PARTITION
  // were committed before this session: then it reads none of them.
  bool committed_before(Partition partition, const std::string& txn_id, const mysql::BinlogPosition& position) const;
  void note_newest(const Coordinates& at, const std::string& gtid);
};

// Which tables a commit covers.
enum class CommitScope { kAll, kOneTable };
// Whether a snapshot claims its newest change's position as its table's source position (9).
enum class PositionClaim { kNone, kClaimed };
// A sink, or a rebuild that stops at the original's offsets.
enum class SessionMode { kSink, kRebuild };

class SessionState {
 public:
  SessionState(std::string group_id, SessionMode mode) : group_id_(std::move(group_id)), mode_(mode) {}

  TableState& add_table(const std::string& topic);
  void drop_table(const std::string& topic) { tables_.erase(topic); }
  TableState& table(const std::string& topic);
  std::map<std::string, TableState>& tables() { return tables_; }
  const std::map<std::string, TableState>& tables() const { return tables_; }

  Route route(const TableState& table, const ReadRecord& read, const RecordFacts& facts, Arrival arrival,
              const Ownership& ownership) const;
  ChangeAction judge_change(const TableState& table, const RecordFacts& facts, const ChangeEvent& event) const;

  // The reading of PARTITION reached NEXT: past a redelivered record, or the partition's end (which
  // lies past a trailing transaction marker, where no record can take it); true when that ended the
  // re-reading of every partition (--from).
  bool reread_reached(const envelope::TopicPartition& partition, Offset next);
  void reread(const envelope::TopicPartition& partition, Offset until) { rereading_[partition] = until; }
  std::map<envelope::TopicPartition, std::int64_t> rereading() const;
  // Counts a record towards its transaction (a record of none stands alone).
  void count(TableState& table, const RecordFacts& facts);
  // The record's offset is passed: its partition's next offset moves past it.
  void advance(TableState& table, const kafka::ConsumedRecord& record);
  void applied(TableState& table, const ChangeEvent& event);
  void appended_history(TableState& table);  // a superseded replay: the changelog only

  // STATEMENT's record met in its partition; true once every partition met it (it is applied
  // then). Throws Error for another statement while one is not applied everywhere.
  bool meet(TableState& table, SchemaChangeRecord statement, const kafka::ConsumedRecord& record);
  // The statement was applied: its records are passed, and TABLE holds what came before it.
  // Lifts its barrier; the records held behind it wait in the drain, in order, until nothing holds them.
  void schema_change_applied(TableState& table, MetSchemaChange& met);
  // Whether a table's partitions all met its schema change: it is applied after a commit of every table.
  bool schema_change_due() const;
  // Raises BARRIER again when its table is read here; false when the table passed its statement.
  bool carry_barrier(const CarriedBarrier& barrier);
  // READ (of FACTS) waits in the drain; a record handed back waits first in its partition again.
  void wait(ReadRecord read, const RecordFacts& facts, Arrival arrival);
  // The first waiting record of a partition that no longer waits, taken out to be handled again.
  std::optional<ReadRecord> take_ready() { return drain_.take_ready(transactions_); }
  bool anything_ready() const { return drain_.anything_ready(transactions_); }

  OpenTransactions& transactions() { return transactions_; }
  const OpenTransactions& transactions() const { return transactions_; }
  Drain& drain() { return drain_; }
  const Drain& drain() const { return drain_; }
  void begin_drain() { drain_.begin(transactions_); }

  // Reading PARTITION begins at START (the offset it was assigned at).
  void expect(const envelope::TopicPartition& partition, Offset start) { expected_[partition] = start; }
  // A record read at OFFSET in PARTITION: the offset the reader should have delivered instead, when
  // it skipped ahead (nullopt: nothing skipped). The shell then asks whether the skip is a gap
  // (gap_in_delivery): transaction markers and aborted records are skipped legitimately.
  std::optional<Offset> delivered(const envelope::TopicPartition& partition, Offset offset);
  // The offset PARTITION's next record is expected at.
  Offset expected(const envelope::TopicPartition& partition) const;

  void at_end(const envelope::TopicPartition& partition) { at_end_.insert(partition); }
  // PARTITION of TABLE was read to its end, the reader standing at END: what lies between the
  // partition's next offset and END holds no record (transaction markers, aborted records), so
  // the next offset moves there, unless records of the partition still wait or are held. A table
  // caught up thus records an offset a later start finds nothing missing before, even when
  // retention deleted the markers.
  void read_to_end(TableState& table, Partition partition, Offset end);
  void read_in(const envelope::TopicPartition& partition) { at_end_.erase(partition); }
  bool is_at_end(const envelope::TopicPartition& partition) const { return at_end_.contains(partition); }

  // Rebuild mode: every partition reached the original's offsets.
  bool finished() const;
  // Whether TABLE's tables, once what was read is committed, equal the source table at the position
  // of the newest change they hold: every partition of its topic read to its end, nothing waiting.
  bool claimable(const TableState& table) const;
  // TABLE became claimable at a position its committed snapshot does not claim yet.
  bool claim_missing(const TableState& table) const;
  bool claim_due() const;
  // A commit is due after SINCE_COMMIT with the commit policy's bounds (records that changed
  // nothing are committed too, at the interval, so the offsets reach each partition's end).
  bool commit_due(std::chrono::steady_clock::duration since_commit, std::size_t max_changes,
                  std::chrono::steady_clock::duration interval) const;
  // Whether TABLE has anything to commit (changes, offsets, a claim).
  bool has_news(const TableState& table) const;
  // The snapshot summary TABLE's next commit records (by WRITER, claiming its position or not).
  std::map<std::string, std::string> summary(const TableState& table, const std::string& writer,
                                             PositionClaim claim) const;
  // Before the catalog transaction: a commit of SCOPE may be cut now (2).
  void check_cut(CommitScope scope, const TableState* only) const;
  // The catalog transaction landed TABLE's commit (whose snapshot claims a position or not).
  void committed(TableState& table, PositionClaim claim);
  // After a commit of SCOPE: nothing applied is pending any more (kAll).
  void commit_done(CommitScope scope);

  std::size_t pending_changes() const { return pending_changes_; }
  std::size_t held_records() const;
  std::uint64_t next_commit_sequence() { return ++commit_sequence_; }

 private:
  const std::string group_id_;
  const SessionMode mode_;
  std::map<std::string, TableState> tables_;  // by topic
  OpenTransactions transactions_;
  Drain drain_;
  // The partitions whose end the reader reported after the last record handed over.
  std::set<envelope::TopicPartition> at_end_;
  // The offset each partition's next record is expected at: past the last one read.
  std::map<envelope::TopicPartition, Offset> expected_;
  // --from: the partitions read again from before the tables' offsets, until they get there.
  std::map<envelope::TopicPartition, Offset> rereading_;
  std::size_t pending_changes_ = 0;
  bool offsets_moved_ = false;  // records read since the last commit (applied, skipped or diverted)
  // The newest change applied (by source position): its coordinates, GTID and source commit time.
  std::optional<Coordinates> newest_;
  std::string newest_gtid_;
  std::int64_t newest_commit_ms_ = 0;
  std::uint64_t commit_sequence_ = 0;  // makes commit ids unique within a millisecond
};

}  // namespace binberg::sink
