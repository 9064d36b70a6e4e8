#pragma once

// A Kafka consumer with manual offset control: binberg decides where to read from (offsets stored
// in its Iceberg snapshots), so auto-commit is off and reads default to read_committed.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "kafka/client_config.h"
#include "kafka/producer.h"

namespace RdKafka {
class KafkaConsumer;
}

namespace binberg::kafka {

struct ConsumedRecord {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<Header> headers;
  std::int64_t timestamp_ms = 0;
};

// Where a consumer goes when the offset it should read is not in the partition (retention deleted
// it, or the topic was made again): its first offset, or nowhere (an error to the reader).
enum class OffsetReset { kEarliest, kError };

struct ConsumerOptions {
  ClientOptions client;
  std::string group_id;
  bool read_committed = true;
  OffsetReset offset_reset = OffsetReset::kEarliest;
};

struct PartitionStart {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;  // the next offset to read
};

// A partition read to its end (transaction markers included): nothing after it yet.
struct PartitionEnd {
  std::string topic;
  std::int32_t partition = 0;
  // Where the reader stands: past every record before the end (read_committed: past transaction
  // markers and aborted records too); -1 when not known.
  std::int64_t offset = -1;
};

// What one poll gives: nothing within the timeout, a record, or a partition's end.
using Polled = std::variant<std::monostate, ConsumedRecord, PartitionEnd>;

class Consumer {
 public:
  static Consumer create(const ConsumerOptions& options);

  Consumer(Consumer&&) noexcept;
  Consumer& operator=(Consumer&&) noexcept;
  ~Consumer();

  // Reads exactly these partitions from these offsets (no group rebalancing).
  void assign(const std::vector<PartitionStart>& partitions);
  // Commits OFFSETS (the next offset to read, per partition) as the group's committed offsets,
  // synchronously; throws Error naming the first partition the broker refused.
  void commit(const std::vector<PartitionStart>& offsets);
  // Sends OFFSETS to be committed without waiting for the broker: for offsets that are only
  // reported (the sink's tables hold its own). A commit that fails is not retried; the next one
  // reports newer offsets. Closing the consumer waits for what is still outstanding.
  void commit_in_background(const std::vector<PartitionStart>& offsets);
  // The group's committed offsets of PARTITIONS (offset -1001 where it has none).
  std::vector<PartitionStart> committed(const std::vector<PartitionStart>& partitions,
                                        std::chrono::milliseconds timeout);
  // The high watermark of a partition as the last fetch reported it (no broker call); nullopt when
  // none is known yet.
  std::optional<std::int64_t> high_watermark(const std::string& topic, std::int32_t partition);
  // The partition's first offset as the last fetch reported it (no broker call); nullopt when
  // none is known yet.
  std::optional<std::int64_t> known_low_watermark(const std::string& topic, std::int32_t partition);
  // The first and the next offset of a partition, asked of the broker (the first moves up as
  // retention deletes records). Throws Error when the broker does not answer within TIMEOUT.
  std::pair<std::int64_t, std::int64_t> watermarks(const std::string& topic, std::int32_t partition,
                                                   std::chrono::milliseconds timeout);
  // The first offset of a partition whose record's timestamp is TIMESTAMP_MS or later, asked of the
  // broker; the partition's end when none is. Throws Error when the broker does not answer within TIMEOUT.
  std::int64_t offset_for_time(const std::string& topic, std::int32_t partition, std::int64_t timestamp_ms,
                               std::chrono::milliseconds timeout);

  // The next record, or nullopt when none arrived within TIMEOUT. Throws Error on a consumer
  // error other than reaching a partition's end.
  std::optional<ConsumedRecord> poll(std::chrono::milliseconds timeout);
  // The next record or partition end, as they come; throws like poll().
  Polled poll_event(std::chrono::milliseconds timeout);

 private:
  struct State;
  explicit Consumer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Every record of PARTITIONS from their start offsets up to the end each partition has when the
// reader gets there (read_committed: the last stable offset, so aborted and open transactions
// hold nothing back). Throws Error when the ends are not reached within TIMEOUT.
std::vector<ConsumedRecord> read_to_end(const ConsumerOptions& options, const std::vector<PartitionStart>& partitions,
                                        std::chrono::milliseconds timeout);
// The records of one partition from FROM up to (not including) offset UNTIL, or to the partition's
// end if that comes first. Throws Error when neither is reached within TIMEOUT.
std::vector<ConsumedRecord> read_range(const ConsumerOptions& options, const PartitionStart& from, std::int64_t until,
                                       std::chrono::milliseconds timeout);

}  // namespace binberg::kafka
