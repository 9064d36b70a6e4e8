#pragma once

// Which tables a sink writes, at which writer epoch, and which it must leave alone (invariant 8 of
// kafka_sink.h): claims, epochs and fencing, kept across the sink's sessions. Pure: the clock's
// time and the group's slots come in as arguments.
//
// A sink claims a table it was given with its first commit there, at the epoch after the table's;
// a table it holds must still be at its own epoch and name it as the writer, else another sink
// claimed it since and this one is fenced out of it.

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sink/progress.h"

namespace binberg::sink {

enum class Scaling { kAlone, kShared };  // KafkaSinkOptions::scale_out

// What a session does with a table whose last snapshot is at TABLE_EPOCH by TABLE_WRITER.
struct Claim {
  enum class Kind { kClaim, kHold, kFenced };
  Kind kind = Kind::kClaim;
  Epoch epoch;  // the epoch its commits carry (kClaim: the next one; kHold: its own)
};

class Ownership {
 public:
  using Time = std::chrono::steady_clock::time_point;

  // TOPICS sorted; alone, the sink owns and claims every one from the start.
  Ownership(std::vector<std::string> topics, std::string writer, Scaling scaling);

  const std::string& writer() const { return writer_; }
  const std::set<std::string>& owned() const { return owned_; }
  // Whether a session writes TOPIC's tables: owned, neither fenced nor stopped.
  bool writes(const std::string& topic) const;
  // The epoch this sink holds TOPIC's tables at (0: none yet).
  Epoch held(const std::string& topic) const;

  Claim judge(const std::string& topic, Epoch table_epoch, const std::string& table_writer) const;
  // A commit landed in TOPIC's tables at EPOCH: the sink holds them there (claimed, or held still).
  void committed(const std::string& topic, Epoch epoch);
  // Another sink claimed TOPIC's tables: alone, the sink gives them up; shared, it leaves them
  // until UNTIL, then claims them again if the group still gives them to it.
  void fence(const std::string& topic, Time until);
  // TOPIC's tables stopped at a schema change the policy refused (REASON): no session writes them.
  void stop(const std::string& topic, std::string reason);
  const std::map<std::string, std::string>& stopped() const { return stopped_; }

  // Shared: the fences that ended by NOW are lifted (their topics claimed anew); true when one was.
  bool lift_fences(Time now);
  // Shared: the group gives this sink SLOTS now (slot i is the i-th sorted topic); true when the
  // topics it writes changed.
  bool assign(const std::vector<std::int32_t>& slots);

  // Transactions the source abandoned, dropped whole by every later session.
  void abandon(std::string txn_id) { abandoned_.insert(std::move(txn_id)); }
  bool abandoned(const std::string& txn_id) const { return abandoned_.contains(txn_id); }

 private:
  const std::vector<std::string> topics_;
  const std::string writer_;
  const Scaling scaling_;
  // The topics whose tables this sink writes now; those of them it has not committed to since it
  // got them (its next commit there claims the table); the epoch it holds each table at.
  std::set<std::string> owned_, to_claim_;
  std::map<std::string, Epoch> epochs_;
  std::map<std::string, Time> fenced_until_;
  std::map<std::string, std::string> stopped_;
  std::set<std::string> abandoned_;
};

}  // namespace binberg::sink
