#pragma once

// The records of `binberg source` (kafka_source.h has the delivery modes): each source
// transaction's change records and DDL statements in its tables' topics, and the saves of the
// positions after them.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/captured_table.h"
#include "capture/source_position.h"
#include "core/change_event.h"
#include "core/source_transaction.h"
#include "envelope/change_envelope.h"
#include "envelope/transaction_footprint.h"
#include "kafka/producer.h"
#include "metrics/metrics.h"
#include "publish/kafka_source.h"
#include "publish/learned_columns.h"
#include "publish/source_metrics.h"
#include "registry/registry_client.h"

namespace binberg::publish {

// A captured table as a session of the source publishes it to its topic.
struct PublishedTable {
  capture::CapturedTable source;
  std::string topic;
  std::int32_t partitions = 1;
  // What Kafka holds of the table: saved, and produced in this session (saved at the next save).
  std::optional<capture::SourcePosition> saved, position;
  std::shared_ptr<const TableSchema> registered;  // the schema the ids below are for
  std::optional<envelope::EnvelopeSchemas> schemas;
  std::int32_t key_id = 0, value_id = 0;
  LearnedColumns learned;  // from the table's DDL: what its records' schemas need besides its definition
  std::string stopped;     // why the table stopped in this session; empty: it runs
  metrics::Counter* records = nullptr;
};

class ChangeProducer {
 public:
  // Creates the Kafka producer: transactional under the source's transactional.id (fencing an
  // earlier process of the source) for exactly-once, else idempotent. Registers the records'
  // schemas in REGISTRY; counts records and stopped tables in STATS.
  ChangeProducer(const KafkaSourceOptions& options, registry::RegistryClient& registry, SourceMetrics& metrics,
                 KafkaSourceStats& stats);

  void learn_topics(const std::vector<std::string>& topics);
  // Sends EVENT of the transaction TXN_ID: one record, two for an update of the primary key
  // (kKeyChangeHeader); none when the table stops here (the registry refused the event's schema).
  void produce(PublishedTable& table, const ChangeEvent& event, const std::string& txn_id);
  // TXN, a DDL statement on TABLE published as CHANGE_JSON (tables::PublishedSchemaChange): one
  // record in every partition (envelope::kSchemaChangeHeader), so that a sink meets it in order
  // with the changes around it.
  void produce_schema_change(const PublishedTable& table, const SourceTransaction& txn, const std::string& txn_id,
                             const std::string& change_json);
  // Sends the held records, each with the transaction's footprint: the transaction is complete.
  void end_transaction();
  // Sends RECORD, the saved positions. Exactly-once: in the Kafka transaction of the records
  // before it. At-least-once: after every record before it is acknowledged. Returns how many
  // records it saved.
  std::size_t save(const kafka::OutgoingRecord& record);
  // Produced since the last save.
  std::size_t pending_records() const { return pending_records_; }

 private:
  // False when the table stops here (the registry refused SCHEMA as incompatible). The schemas
  // carry what the table learned from its DDL (defaults of added NOT NULL columns, earlier names
  // of renamed ones), so a registry's BACKWARD check accepts those changes.
  bool ensure_schemas(PublishedTable& table, const std::shared_ptr<const TableSchema>& schema, const SourceInfo& where);
  // One record; records are held back one per partition, so that the last of a transaction in
  // each partition can carry its footprint. KEY_CHANGE: the kKeyChangeHeader value, if any.
  void produce_record(PublishedTable& table, const ChangeEvent& event, const std::string& txn_id,
                      const char* key_change);
  // RECORD is the next of the transaction in its partition: the one held there before it goes.
  void hold(kafka::OutgoingRecord record);
  void begin_transaction_if_needed();

  const KafkaSourceOptions& options_;
  registry::RegistryClient& registry_;
  SourceMetrics& metrics_;
  KafkaSourceStats& stats_;
  kafka::Producer producer_;
  bool in_transaction_ = false;
  envelope::Footprint footprint_;  // of the source transaction being produced
  std::map<envelope::TopicPartition, kafka::OutgoingRecord> held_;
  std::size_t pending_records_ = 0;
};

}  // namespace binberg::publish
