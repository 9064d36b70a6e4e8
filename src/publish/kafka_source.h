#pragma once

// Path B, first half: `binberg source`, binlog -> Kafka. One topic per captured table
// (<prefix>.<db>.<table>); key = the primary key (Avro), value = the change envelope
// (envelope/change_envelope.h), both in the Confluent wire format with schemas registered under
// TopicNameStrategy; headers carry the event id and the source position.
//
// Where the source stands is kept in Kafka itself: a compacted offsets topic holds, under the
// source's name, the position of every captured table (what Kafka holds of it). A restart reads
// it back, streams from the smallest, and skips in each table what it already holds.
//
// Delivery modes and the invariants each keeps:
//   exactly-once: one Kafka transaction holds the records of whole source transactions and the
//     new positions; it commits or aborts as one, so a read_committed consumer sees every row
//     event once, in source order per key, and the saved position always matches the records.
//     A crash aborts (or the next start's init_transactions fences) the open transaction.
//   at-least-once: records are produced idempotently and the positions saved only after every
//     record before them is acknowledged, so nothing is lost; after a crash the records since
//     the last saved position are produced again (same event ids and positions: the sink
//     recognizes and counts them).
// Either way commits are cut between source transactions only.
//
// A table whose new schema the registry refuses (409: incompatible) stops at the position
// before the change, with an error naming the table and the registry's reason; the other tables
// go on. The next start retries it (after the operator made the change compatible).
// Failures of Kafka, the registry or the source end the session; the source then starts over
// from the saved positions, with backoff, until it is stopped.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/captured_table.h"
#include "capture/source_position.h"
#include "capture/source_reader.h"
#include "core/backoff.h"
#include "kafka/client_config.h"
#include "metrics/metrics.h"
#include "mysql/connection.h"
#include "publish/initial_copy.h"
#include "publish/learned_columns.h"
#include "registry/registry_client.h"

namespace binberg::publish {

enum class Delivery { kAtLeastOnce, kExactlyOnce };

struct KafkaSourceOptions {
  mysql::ConnectionOptions source;
  std::uint32_t server_id = 0;
  std::vector<capture::CapturedTable> tables;
  kafka::ClientOptions kafka;
  registry::RegistryOptions registry;
  std::string topic_prefix = "binberg";
  std::int32_t partitions = 1;  // of each table's topic, when binberg creates it
  std::int16_t replication_factor = 1;
  Delivery delivery = Delivery::kExactlyOnce;
  // The source's identity: the key of its saved positions and its transactional.id.
  std::string source_name = "binberg";
  std::string offsets_topic;     // empty: "<topic_prefix>.binberg.offsets"
  capture::CommitPolicy commit;  // when positions are saved (a Kafka transaction is cut)
  std::size_t snapshot_chunk_rows = 10'000;
  std::chrono::milliseconds heartbeat{250};
  capture::SourceReaderOptions reader;
  metrics::Registry* metrics = nullptr;
  std::chrono::milliseconds first_retry_backoff{500};
  std::chrono::milliseconds max_retry_backoff = Backoff::kMost;
  std::uint32_t max_consecutive_failures = 0;  // sessions failing in a row before giving up; 0: never
};

struct KafkaSourceStats {
  std::uint64_t transactions = 0;  // read from the binlog
  std::uint64_t records = 0;       // change records produced (snapshot rows included)
  std::uint64_t snapshot_rows = 0;
  std::uint64_t commits = 0;   // positions saved
  std::uint64_t restarts = 0;  // sessions that failed and were started again
  std::vector<std::string> stopped_tables;
};

// "<prefix>.<db>.<table>"
std::string change_topic(const std::string& prefix, const capture::CapturedTable& table);

// What a source saved, by table ("db.table"): where it stands, and what it learned from the
// table's DDL (learned_columns.h). Empty when it saved nothing yet.
struct SavedSource {
  std::map<std::string, capture::SourcePosition> positions;
  std::map<std::string, LearnedColumns> columns;
  // At least once: an initial copy begun and not yet saved as done (initial_copy.h).
  std::optional<InitialCopy> copy;
};
struct PublishedTable;  // change_producer.h

SavedSource read_saved_source(const kafka::ClientOptions& kafka, const std::string& offsets_topic,
                              const std::string& source_name);
// What a save of TABLES writes (with COPY): every table's position and learned columns. Asserts
// that no table's position moves back from what was saved (invariant 1).
SavedSource to_save(const std::vector<std::unique_ptr<PublishedTable>>& tables, const std::optional<InitialCopy>& copy);

class KafkaSource {
 public:
  explicit KafkaSource(KafkaSourceOptions options);
  ~KafkaSource();

  // Snapshots the tables with no saved position, then streams until STOP returns true (checked
  // between transactions and at least every heartbeat), saves what was produced and returns.
  void run(const std::function<bool()>& stop);

  const KafkaSourceStats& stats() const { return stats_; }

 private:
  class Session;

  KafkaSourceOptions options_;
  std::unique_ptr<metrics::Registry> own_registry_;
  metrics::Registry& registry_;
  KafkaSourceStats stats_;
};

}  // namespace binberg::publish
