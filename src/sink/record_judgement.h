#pragma once

// What the sink makes of one record on its own, without the session's state (pure: no I/O): what
// its headers say, its change or why it has none, whether its key is its row's, what a schema
// change record carries, and the verdict on a replayed dead letter from the records before it.

#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/change_event.h"
#include "sink/dead_letters.h"
#include "sink/progress.h"
#include "sink/sink_reader.h"
#include "sink/transactions.h"
#include "tables/schema_change.h"

namespace binberg::sink {

// A schema change's record: a DDL statement met in one partition of its table's topic.
struct SchemaChangeRecord {
  std::string txn, gtid;
  mysql::BinlogPosition position;
  tables::PublishedSchemaChange change;
  std::set<Partition> partitions;  // of its topic, where its footprint says it is
};

// A replayed dead letter's origin (kReplayOfHeader), and when the origin was written
// (kReplayOfTimestampHeader; replays made before binberg wrote it have none).
struct ReplayOf {
  RecordOrigin origin;
  std::optional<std::int64_t> origin_timestamp_ms;
};

// What a record's headers say, read once: the one place they are parsed (record_bytes.h).
struct RecordFacts {
  envelope::TopicPartition partition;
  TransactionMark txn;
  std::optional<SchemaChangeRecord> schema_change;  // kSchemaChangeHeader, with its transaction's headers
  std::optional<ReplayOf> replay_of;                // kReplayOfHeader: it replays a dead letter
  std::string key_change;  // kKeyChangeHeader: "old" or "new" for a primary-key update's halves
  // Why its headers do not parse (naming the header, topic, partition and offset): it goes to the
  // dead-letter topic, standing alone (none of the other facts is known then).
  std::optional<std::string> malformed;

  // Never throws for what the headers hold: a header that does not parse makes `malformed`.
  static RecordFacts of(const ReadRecord& read);
};

// Where EVENT stands in the source history; KEY_CHANGE is its record's kKeyChangeHeader.
Coordinates coordinates_of(const ChangeEvent& event, const std::string& key_change);

// READ's change (taken out of it), or why it has none: the reason it goes to the dead-letter topic,
// naming where the record is and what of it is wrong. Rethrows a registry that fails otherwise
// than "not found" (an outage: the session starts over, good records are never dead-lettered) and
// a ConfigError.
std::variant<ChangeEvent, std::string> take_change(ReadRecord& read);

// Why READ's key is not the key of EVENT's row, or nullopt when it is (the audit gate). Rethrows
// a registry outage, as take_change.
std::optional<std::string> key_problem(const ReadRecord& read, const ChangeEvent& event);

// Whether a partition whose applied progress is PROGRESS is past the statement at POSITION (it is
// met again: an at-least-once source repeating itself, a rewind).
bool passed(const Progress& progress, const mysql::BinlogPosition& position);

// A record of the partition between a replayed dead letter's origin and the replay, as read again:
// its headers and its change (none when it does not decode: it was never applied).
struct HistoryRecord {
  Headers headers;
  std::optional<ChangeEvent> change;
};

enum class ReplayVerdict { kApply, kSuperseded, kDuplicate };
const char* to_string(ReplayVerdict verdict);

// The records of one partition that came after the dead letter's ORIGIN (PARTITION), or those of
// every partition where a newer change of its key can be (PARTITIONS: a key moves partition when
// its key schema changes), decide on its replay (of EVENT): one replaying the same origin makes
// this one a duplicate, and so does a clean copy of the same change applied in its partition
// before anything as new; a change of the same key newer in the source makes it superseded (the
// key's state must not move back).
ReplayVerdict judge_replay(const std::vector<HistoryRecord>& partition, const ChangeEvent& event,
                           const RecordOrigin& origin);
ReplayVerdict judge_replay_across(const std::vector<std::vector<HistoryRecord>>& partitions, const ChangeEvent& event,
                                  const RecordOrigin& origin);

}  // namespace binberg::sink
