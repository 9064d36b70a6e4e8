#pragma once

// Where `binberg sink` meets the world outside its tables: the clock, one session's side of Kafka
// (its records, the dead-letter and quarantine topics, the records a replay is judged by, the
// consumer group it reports to), and the group that shares the tables out. The sink runs on the
// Kafka ones (sink/kafka_ports.h); a deterministic simulation runs the same sink on its own
// (tests/sink/sink_simulation_test.cc), with a real catalog.

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "kafka/consumer.h"
#include "sink/progress.h"
#include "sink/record_judgement.h"
#include "sink/sink_reader.h"

namespace binberg::sink {

struct KafkaSinkOptions;

// read_between: up to the partition's end.
inline constexpr Offset kToTheEnd{std::numeric_limits<std::int64_t>::max()};

// How a record was diverted: whole, or truncated (too large for its dead-letter topic).
enum class Diverted { kWhole, kTruncated };

// One session's side of Kafka, for the session's thread.
class SinkInput {
 public:
  virtual ~SinkInput() = default;

  virtual std::int32_t partition_count(const std::string& topic) = 0;
  // The offsets the partition holds now, asked of the broker.
  virtual PartitionBounds bounds(const std::string& topic, Partition partition) = 0;
  // The partition's first offset as the last fetch reported it (no broker call); nullopt when not
  // known yet.
  virtual std::optional<Offset> known_first_offset(const std::string& topic, Partition partition) = 0;
  virtual void assign(const std::vector<kafka::PartitionStart>& starts) = 0;
  // Begins reading what was assigned; records below SKIP_BELOW are handed over undecoded.
  virtual void start_reading(const std::map<envelope::TopicPartition, std::int64_t>& skip_below) = 0;
  // The next record or partition end, waiting up to TIMEOUT; nullopt when none came.
  virtual std::optional<ReadItem> next(std::chrono::milliseconds timeout) = 0;
  virtual std::size_t queued() const = 0;  // read ahead, not handed over yet
  // The partition's end as the last fetch saw it; nullopt when not known yet.
  virtual std::optional<Offset> end_offset(const std::string& topic, Partition partition) = 0;
  // Monitoring only (a start reads the tables' offsets): the consumer group's committed offsets.
  virtual void report_offsets(const std::vector<kafka::PartitionStart>& offsets) = 0;  // without waiting

  // Makes TOPIC's dead-letter and quarantine topics ready (dead_letter_topics.h), when the
  // session opens its table; throws ConfigError when one of them must not be used.
  virtual void prepare_diversions(const std::string& topic) = 0;
  // RECORD to `<its topic><SUFFIX>` with REASON (dead letters and quarantine), acknowledged by
  // flush_diverted(), which the session calls before every commit. kTruncated: it was too large
  // to divert whole (truncated_diversion).
  virtual Diverted divert(const kafka::ConsumedRecord& record, std::string_view suffix, const std::string& reason) = 0;
  virtual void flush_diverted() = 0;
  // What a replay is judged by (SinkSession::replay). The records of TOPIC [PARTITION] from FROM up
  // to (not including) TO or the partition's end, whichever comes first, decoded; throws when the
  // registry is unwell (a replay is never judged on partial knowledge).
  virtual std::vector<HistoryRecord> read_between(const std::string& topic, Partition partition, Offset from,
                                                  Offset to) = 0;
  // The first offset of TOPIC [PARTITION] written at TIMESTAMP_MS or later (the end when none is).
  virtual Offset offset_at_time(const std::string& topic, Partition partition, std::int64_t timestamp_ms) = 0;
};

// Scale-out: the slots (one per topic, in sorted order) the group gives this sink.
class SlotSource {
 public:
  virtual ~SlotSource() = default;
  // Serves the group; true when the slots this member holds changed since the last call.
  virtual bool poll() = 0;
  virtual std::vector<std::int32_t> slots() const = 0;
};

class SinkEnvironment {
 public:
  virtual ~SinkEnvironment() = default;
  virtual TimeSource& clock() = 0;
  // Who this process is, for the writer name of its snapshots: "<host>/<pid>".
  virtual std::string process() = 0;
  virtual std::unique_ptr<SinkInput> connect(const KafkaSinkOptions& options) = 0;
  // Scale-out: joins OPTIONS' group after checking every sink of it reads the same topics.
  virtual std::unique_ptr<SlotSource> join_group(const KafkaSinkOptions& options, const std::string& writer) = 0;
};

}  // namespace binberg::sink
