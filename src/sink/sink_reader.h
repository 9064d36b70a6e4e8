#pragma once

// The sink's reader thread: it polls the consumer and decodes each record's value and key, so
// decoding overlaps with applying and committing on the sink's own thread.
//
// Order is kept: items come out in the order the consumer gave them, a partition's end after
// the records before it, so "read to its end" means the same on the sink's thread as it did
// when the sink polled itself. A decoding failure travels with its record as an exception for
// the sink to judge (a dead letter, a quarantine, or a registry outage that ends the session),
// just as if the sink had decoded the record itself; a consumer failure ends the stream after
// the items read before it.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "capture/bounded_queue.h"
#include "core/change_event.h"
#include "envelope/transaction_footprint.h"
#include "kafka/consumer.h"
#include "registry/registry_client.h"

namespace binberg::sink {

// A record's headers by name (a repeated name keeps its last value), looked up by string_view.
using Headers = std::map<std::string, std::string, std::less<>>;

// A record as the reader hands it over.
struct ReadRecord {
  kafka::ConsumedRecord record;
  Headers headers;
  // The change its value carries, or why it carries none (a tombstone, bytes that are no change,
  // a schema id the registry does not know, a registry that does not answer).
  std::optional<ChangeEvent> event;
  std::exception_ptr event_error;
  // The primary key its key names (records with a key, of tables with a primary key), or why
  // that key does not decode.
  std::optional<RowImage> key;
  std::exception_ptr key_error;
};

using ReadItem = std::variant<ReadRecord, kafka::PartitionEnd>;

// Headers by name; a repeated name keeps its last value.
Headers header_map(const kafka::ConsumedRecord& record);

class RecordDecoder;
// Whether the reader looks inside a record (records below the offsets the tables need: never).
enum class Decoding { kDecode, kSkip };

// RECORD as the reader hands it over: its headers by name, and its change and key decoded with
// DECODER, or why they do not decode (kSkip, a schema change record: neither is looked at).
ReadRecord decode_record(kafka::ConsumedRecord record, RecordDecoder& decoder, Decoding decoding);

class SinkReader {
 public:
  // Reads from CONSUMER (assigned already; it must outlive the reader) with a decoder of its own.
  // Records below a partition's offset in SKIP_BELOW are handed over undecoded (the sink counts
  // them as redelivered and never looks inside), and so are schema change records. At most
  // QUEUE_RECORDS records wait for the sink.
  SinkReader(kafka::Consumer& consumer, const registry::RegistryOptions& registry,
             std::map<envelope::TopicPartition, std::int64_t> skip_below, std::size_t queue_records);
  ~SinkReader();
  SinkReader(const SinkReader&) = delete;
  SinkReader& operator=(const SinkReader&) = delete;

  // The next item, waiting up to TIMEOUT; nullopt when none came. Rethrows the consumer's failure
  // once the items read before it are taken.
  std::optional<ReadItem> next(std::chrono::milliseconds timeout);
  // Records read and not taken by next() yet (at most the queue's bound plus one batch).
  std::size_t queued() const;

 private:
  void run(kafka::Consumer& consumer, const registry::RegistryOptions& registry);

  const std::map<envelope::TopicPartition, std::int64_t> skip_below_;
  capture::BoundedQueue<std::vector<ReadItem>> queue_;
  // The sink's thread only: the batch it took last, and the first item of it not handed out yet.
  std::vector<ReadItem> taken_;
  std::size_t next_taken_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace binberg::sink
