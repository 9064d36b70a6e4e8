#pragma once

// An at-least-once source's initial copy, kept whole across a crash.
//
// At least once, the copy's records are acknowledged (flushed) before the copy's position is
// saved. A crash between the two used to leave no position, and the next start took a second
// copy at a later point: the sink then upserted the second copy over the first, so rows deleted
// in between came back, and the changelog held two copies. Now the source saves where the copy
// begins before it produces it (the copy's transaction id, its source position, and the end of
// each partition of the copied tables' topics). A start that finds such a record and no saved
// position reads the partitions' tails: when every partition holds exactly the records the
// copy's footprint announces, the copy is whole in Kafka and the source keeps it, streaming from
// its position; otherwise it takes a new copy, and sinks drop the unfinished one whole.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capture/source_position.h"
#include "envelope/transaction_footprint.h"
#include "kafka/client_config.h"

namespace binberg::publish {

struct InitialCopy {
  std::string transaction_id;  // "snapshot:<file>:<pos>", the copy's records' kTransactionHeader
  capture::SourcePosition position;
  std::vector<std::string> tables;  // "db.table", the tables the copy holds
  // The next offset of each partition of the copied tables' topics when the copy began.
  std::map<envelope::TopicPartition, std::int64_t> start_offsets;

  nlohmann::json to_json() const;
  // Throws Error naming what is missing or malformed.
  static InitialCopy from_json(const nlohmann::json& json);
};

// The next offset of each partition of TOPICS (name -> partition count), asked of the broker.
std::map<envelope::TopicPartition, std::int64_t> partition_ends(const kafka::ClientOptions& kafka,
                                                                const std::map<std::string, std::int32_t>& topics);

// What Kafka holds of COPY over TOPICS (its tables' topics: name -> partition count).
struct CopyInKafka {
  std::string not_whole;                        // empty when every partition holds, after its start offset, exactly the
                                                // records the copy's footprint announces; else why not
  std::map<std::string, std::int64_t> records;  // by topic (a table stopped in the copy has none)
};
CopyInKafka find_copy(const kafka::ClientOptions& kafka, const InitialCopy& copy,
                      const std::map<std::string, std::int32_t>& topics);

}  // namespace binberg::publish
