#pragma once

// The records `binberg sink` could not use, and their way back. An undecodable record goes to
// `<topic>.dlq`, a mis-keyed one to `<topic>.quarantine`, each with its original key, value and
// headers plus why and where it came from (diverted_headers). `binberg dlq` lists and shows dead
// letters and replays repaired ones into the topic they came from (replay_record), marked with
// kReplayOfHeader so the sink can apply a replay at most once and never move a key backwards
// (see KafkaSink: replayed records).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "avro/schema.h"
#include "core/change_event.h"
#include "kafka/client_config.h"
#include "kafka/consumer.h"
#include "kafka/producer.h"
#include "registry/registry_client.h"

namespace binberg::sink {

inline constexpr std::string_view kDeadLetterSuffix = ".dlq";
inline constexpr std::string_view kQuarantineSuffix = ".quarantine";
inline constexpr std::string_view kErrorHeader = "binberg.error";
inline constexpr std::string_view kOriginHeader = "binberg.origin";  // <topic>/<partition>@<offset>
inline constexpr std::string_view kOriginTimestampHeader = "binberg.origin_timestamp_ms";
// On a replayed record: the origin of the dead letter it replays, and that origin's timestamp.
inline constexpr std::string_view kReplayOfHeader = "binberg.replay_of";
inline constexpr std::string_view kReplayOfTimestampHeader = "binberg.replay_of_timestamp_ms";

// Where a record was: topic, partition and offset.
struct RecordOrigin {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;

  std::string to_string() const;
  // Parses "<topic>/<partition>@<offset>"; throws Error naming TEXT.
  static RecordOrigin parse(const std::string& text);
  auto operator<=>(const RecordOrigin&) const = default;
};

// The headers of RECORD diverted for REASON: its own, then the error, origin and timestamp.
std::vector<kafka::Header> diverted_headers(const kafka::ConsumedRecord& record, const std::string& reason);

struct DeadLetter {
  kafka::ConsumedRecord record;  // as diverted (its offset is the one in `<topic>.dlq`)
  std::string error;
  RecordOrigin origin;
  std::int64_t origin_timestamp_ms = 0;
};

// Every record of `<TOPIC>.dlq`, oldest first (none when the topic does not exist). Throws Error
// when the broker does not answer within TIMEOUT.
std::vector<DeadLetter> read_dead_letters(const kafka::ClientOptions& client, const std::string& topic,
                                          std::chrono::milliseconds timeout);

// The records of TOPIC that replay a dead letter, by the origin they replay. Reads the whole topic.
std::map<RecordOrigin, RecordOrigin> replayed_origins(const kafka::ClientOptions& client, const std::string& topic,
                                                      std::chrono::milliseconds timeout);

// The schema (Avro JSON) a registry holds under an id; throws registry::RegistryError as
// RegistryClient::schema_by_id does.
using SchemaFetch = std::function<std::string(std::int32_t id)>;

// Decodes change records with the schemas a registry holds (cached by id; ids never change).
class RecordDecoder {
 public:
  explicit RecordDecoder(registry::RegistryOptions options);
  // Schemas from FETCH instead of a registry (the unit tests and the fuzz target: no I/O).
  explicit RecordDecoder(SchemaFetch fetch);

  // The change a record's VALUE carries, with the source table's shape its schema gives. Throws
  // registry::RegistryError when the registry does not know the id (404) or fails, and an Error
  // (MalformedRecord for what the parsers did not name) when the bytes or their schema are not a
  // change record's: nothing else (record_bytes.h).
  ChangeEvent change(std::string_view value);
  // The primary key a record's KEY names, for rows of TABLE; throws like change().
  RowImage key(std::string_view key, const TableSchema& table);
  // The registry it reads (a decoder made with a registry only).
  registry::RegistryClient& registry();

 private:
  struct ValueSchema {
    avro::Schema avro;
    std::shared_ptr<const TableSchema> table;
  };
  const ValueSchema& value_schema(std::int32_t id);

  std::shared_ptr<registry::RegistryClient> registry_;  // none with a SchemaFetch of its own
  SchemaFetch fetch_;
  std::map<std::int32_t, ValueSchema> values_;
  std::map<std::int32_t, avro::Schema> keys_;
};

// How a dead letter's value becomes the replayed record's.
struct ReplayEncoding {
  // false: the original value bytes, unchanged (the cause was elsewhere, e.g. a schema registered
  // since). true: the Avro body after the 5-byte header decoded with a registered schema of the
  // topic's value subject (a wrong magic byte, a schema id of another registry) and encoded again
  // with that schema's id.
  bool reencode = false;
  std::optional<std::int32_t> schema_id;  // reencode: this id instead of the subject's latest version
};

// The record that replays DEAD into the topic it came from: its value (ENCODING); its own key and
// partition when that key decodes to the primary key of the row it carries (so it joins the key's
// other changes), else that key encoded with the topic's latest key schema and partitioned among
// PARTITIONS as the source does; its original headers less the sink's and the transaction's (a
// replay stands alone), plus kReplayOfHeader and kReplayOfTimestampHeader. Throws Error saying why it cannot be
// replayed as asked.
kafka::OutgoingRecord replay_record(const DeadLetter& dead, const ReplayEncoding& encoding, RecordDecoder& decoder,
                                    std::int32_t partitions);

}  // namespace binberg::sink
