#pragma once

// The source transactions a sink session has begun and not yet holds whole, and the drain that
// cuts a commit between them (invariants 2 and 7 of kafka_sink.h). Pure: no I/O, no clock.
//
// A transaction is whole once its footprint is known (the last record of a transaction in each
// partition carries it) and every partition this sink reads holds the records the footprint lists
// there. A commit is due: the drain begins; from then on a record that begins a transaction newer
// than every open one waits (and so does everything behind it in its partition) until the open
// ones are whole and the commit is cut; older ones are let in, so the drain always ends. A schema
// barrier (a DDL statement met, not yet applied) likewise holds every record after the statement.

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "envelope/transaction_footprint.h"
#include "mysql/binlog_stream.h"
#include "sink/sink_reader.h"

namespace binberg::sink {

// What a record says of its transaction (its headers).
struct TransactionMark {
  std::string id;                                 // empty: a producer without transactions
  std::optional<mysql::BinlogPosition> position;  // of the change, in the source
  std::optional<envelope::Footprint> footprint;   // on the transaction's last record in its partition
};

class OpenTransactions {
 public:
  // Whether a footprint entry concerns this session (a partition it reads whose tables do not
  // hold their part of the transaction already).
  using Concerns = std::function<bool(const envelope::TopicPartition&, const std::string& txn_id,
                                      const mysql::BinlogPosition& position)>;

  // Counts a record of MARK's transaction read from PARTITION. Returns the transaction's footprint
  // (what concerns this session) when this record made it whole.
  std::optional<envelope::Footprint> count(const envelope::TopicPartition& partition, const TransactionMark& mark,
                                           const Concerns& concerns);
  // A schema change's record: its partition is past the transaction it ends.
  void end_in(const envelope::TopicPartition& partition, const std::string& txn_id);

  // The transaction PARTITION's current one abandoned, if a record of MARK's shows its source gave
  // it up: a newer transaction there while the current one never ended there (an older one is a
  // redelivery: a source that starts over from a saved position produces the unended one again
  // first; after an unended initial copy it takes a new one before anything else).
  std::optional<std::string> abandoned_by(const envelope::TopicPartition& partition, const TransactionMark& mark) const;

  bool whole() const { return open_.empty(); }
  std::size_t size() const { return open_.size(); }
  const std::string& first() const;  // of the open ones, by id (for messages)
  bool contains(const std::string& txn_id) const { return open_.contains(txn_id); }
  // The newest position an open transaction reached (an empty file: none, or none known).
  mysql::BinlogPosition horizon() const;
  // Whether an open transaction lacks records it has in a partition of TOPIC (its footprint there
  // unknown, or not all counted): before a table commits alone its part of every one is whole.
  bool partly_in(const std::string& topic) const;
  // An open transaction after POSITION in the source, if there is one.
  std::optional<std::string> open_after(const mysql::BinlogPosition& position) const;

 private:
  struct Open {
    mysql::BinlogPosition position;                // where it ends in the source
    std::optional<envelope::Footprint> footprint;  // of the partitions this sink reads
    envelope::Footprint counted;
  };
  // The transaction a partition is in the middle of, and whether its last record there came.
  struct Current {
    std::string id;
    bool ended = false;
  };

  std::map<std::string, Open> open_;
  std::map<envelope::TopicPartition, Current> current_;
};

// A schema barrier a session rolled back for, raised again from the next session's start (KafkaSink
// keeps it): a change after the statement had been applied before the statement was met.
struct CarriedBarrier {
  std::string topic;
  mysql::BinlogPosition position;
};

// Records wait here, each partition's in order, while a drain or a schema barrier holds them.
//
// Draining: a commit is due and waits for the open transactions; records of newer ones wait.
// A schema barrier: a DDL statement met in a table's topic and not yet applied. Every record of a
// transaction after it waits, in every topic, so that no change after the statement reaches any
// table before the statement's table holds it: the transactions before it are then committed whole
// in one catalog commit, the statement in one of its own after them (SinkSession::apply_schema_change).
class Drain {
 public:
  bool draining() const { return draining_; }
  // Begins a drain (again, if one is under way): the newest open transaction marks its horizon.
  void begin(const OpenTransactions& open);
  void end() { draining_ = false; }

  // TOPIC met a schema change at POSITION (raised again: no change); the lowest barrier holds.
  void raise_barrier(const std::string& topic, const mysql::BinlogPosition& position);
  void lift_barrier(const std::string& topic) { barriers_.erase(topic); }
  std::optional<mysql::BinlogPosition> barrier() const;

  // Whether a record of MARK's transaction waits on its own (as the first of its partition's).
  bool holds(const TransactionMark& mark, const OpenTransactions& open) const;
  // Whether a record of MARK's transaction read from PARTITION waits: on its own, or behind one that does.
  bool waits(const envelope::TopicPartition& partition, const TransactionMark& mark,
             const OpenTransactions& open) const {
    return waiting_in(partition) || holds(mark, open);
  }
  // READ waits behind its partition's waiting records, or before them when it was handed back.
  void wait(ReadRecord read, TransactionMark mark, bool handed_back = false);
  bool waiting_in(const envelope::TopicPartition& partition) const { return waiting_.contains(partition); }
  bool anything_waits() const { return !waiting_.empty(); }
  std::size_t waiting() const;
  // Whether the first waiting record of some partition no longer waits on its own.
  bool anything_ready(const OpenTransactions& open) const;
  // That record, taken out to be handled again (nullopt: every partition's first still waits).
  std::optional<ReadRecord> take_ready(const OpenTransactions& open);
  template <typename Visit>
  void for_each(const Visit& visit) const {
    for (const auto& [partition, records] : waiting_) {
      for (const Waiting& waiting : records) visit(waiting.read);
    }
  }

 private:
  struct Waiting {
    ReadRecord read;
    TransactionMark mark;
  };
  bool draining_ = false;
  mysql::BinlogPosition horizon_;  // the newest open transaction when the drain began (empty file: none)
  std::map<envelope::TopicPartition, std::deque<Waiting>> waiting_;  // no partition without records
  std::map<std::string, mysql::BinlogPosition> barriers_;            // by topic
};

}  // namespace binberg::sink
