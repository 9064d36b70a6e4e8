#include "sink/transactions.h"

#include <algorithm>

#include "capture/source_position.h"
#include "core/assert.h"

namespace binberg::sink {

std::optional<envelope::Footprint> OpenTransactions::count(const envelope::TopicPartition& partition,
                                                           const TransactionMark& mark, const Concerns& concerns) {
  BINBERG_ASSERT(!mark.id.empty(), "{} [{}]: a record without a transaction is not counted", partition.first,
                 partition.second);
  current_[partition] = Current{mark.id, mark.footprint.has_value()};
  Open& txn = open_[mark.id];
  if (mark.position) txn.position = *mark.position;
  ++txn.counted[partition];
  if (mark.footprint.has_value()) {
    envelope::Footprint footprint;
    for (const auto& [where, records] : *mark.footprint) {
      if (concerns(where, mark.id, txn.position)) footprint.emplace(where, records);
    }
    txn.footprint = std::move(footprint);
  }
  if (!txn.footprint || txn.counted != *txn.footprint) return std::nullopt;
  std::optional<envelope::Footprint> whole = std::move(txn.footprint);
  open_.erase(mark.id);
  return whole;
}

void OpenTransactions::end_in(const envelope::TopicPartition& partition, const std::string& txn_id) {
  current_[partition] = Current{txn_id, true};
}

std::optional<std::string> OpenTransactions::abandoned_by(const envelope::TopicPartition& partition,
                                                          const TransactionMark& mark) const {
  if (mark.id.empty() || !mark.position) return std::nullopt;
  const auto current = current_.find(partition);
  if (current == current_.end() || current->second.ended || current->second.id.empty() ||
      current->second.id == mark.id) {
    return std::nullopt;
  }
  const auto open = open_.find(current->second.id);
  if (open == open_.end()) return std::nullopt;
  // A source that starts over after an unended snapshot takes a new one before anything else; other
  // transactions are newer by position (an older one is a redelivery, produced again first).
  const bool snapshot_replaced = current->second.id.starts_with("snapshot:");
  if (!snapshot_replaced && capture::compare_binlog(*mark.position, open->second.position) <= 0) return std::nullopt;
  return current->second.id;
}

const std::string& OpenTransactions::first() const {
  BINBERG_ASSERT(!open_.empty(), "no open transaction");
  return open_.begin()->first;
}

mysql::BinlogPosition OpenTransactions::horizon() const {
  mysql::BinlogPosition horizon{"", 4};
  for (const auto& [id, txn] : open_) {
    if (horizon.file.empty() || capture::compare_binlog(txn.position, horizon) > 0) horizon = txn.position;
  }
  return horizon;
}

bool OpenTransactions::partly_in(const std::string& topic) const {
  for (const auto& [id, txn] : open_) {
    for (const auto& [where, records] : txn.counted) {
      if (where.first != topic) continue;
      if (!txn.footprint) return true;
      const auto listed = txn.footprint->find(where);
      if (listed != txn.footprint->end() && records < listed->second) return true;
    }
  }
  return false;
}

std::optional<std::string> OpenTransactions::open_after(const mysql::BinlogPosition& position) const {
  for (const auto& [id, txn] : open_) {
    if (!txn.position.file.empty() && capture::compare_binlog(txn.position, position) > 0) return id;
  }
  return std::nullopt;
}

void Drain::begin(const OpenTransactions& open) {
  draining_ = true;  // a stop during a drain begins it again, at the open transactions' horizon now
  horizon_ = open.horizon();
}

void Drain::raise_barrier(const std::string& topic, const mysql::BinlogPosition& position) {
  barriers_[topic] = position;
}

std::optional<mysql::BinlogPosition> Drain::barrier() const {
  std::optional<mysql::BinlogPosition> lowest;
  for (const auto& [topic, position] : barriers_) {
    if (!lowest || capture::compare_binlog(position, *lowest) < 0) lowest = position;
  }
  return lowest;
}

bool Drain::holds(const TransactionMark& mark, const OpenTransactions& open) const {
  // A record of no source position begins no transaction: no barrier holds it back.
  const auto barrier = this->barrier();
  if (barrier && mark.position && capture::compare_binlog(*mark.position, *barrier) > 0) return true;
  if (!draining_) return false;
  // A record of no source transaction (an outside producer's, an undecodable one) begins none: it
  // has nothing to wait for, and waiting it would hold back the open transaction around it.
  if (mark.id.empty() && !mark.position) return false;
  if (!mark.id.empty() && open.contains(mark.id)) return false;
  return !mark.position || horizon_.file.empty() || capture::compare_binlog(*mark.position, horizon_) > 0;
}

void Drain::wait(ReadRecord read, TransactionMark mark, bool handed_back) {
  std::deque<Waiting>& records = waiting_[{read.record.topic, read.record.partition}];
  if (handed_back) {
    records.push_front(Waiting{std::move(read), std::move(mark)});
  } else {
    records.push_back(Waiting{std::move(read), std::move(mark)});
  }
}

std::size_t Drain::waiting() const {
  std::size_t count = 0;
  for (const auto& [partition, records] : waiting_) count += records.size();
  return count;
}

bool Drain::anything_ready(const OpenTransactions& open) const {
  return std::any_of(waiting_.begin(), waiting_.end(),
                     [&](const auto& entry) { return !holds(entry.second.front().mark, open); });
}

std::optional<ReadRecord> Drain::take_ready(const OpenTransactions& open) {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (holds(it->second.front().mark, open)) continue;
    ReadRecord read = std::move(it->second.front().read);
    it->second.pop_front();
    if (it->second.empty()) waiting_.erase(it);
    return read;
  }
  return std::nullopt;
}

}  // namespace binberg::sink
