#include "publish/change_producer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "avro/wire_format.h"
#include "core/clock.h"
#include "core/failpoint.h"
#include "kafka/partitioner.h"

namespace binberg::publish {
namespace {

// How long an at-least-once save waits for the records before it to be acknowledged; librdkafka
// fails a record itself after message.timeout.ms (5 minutes by default).
constexpr std::chrono::minutes kFlushTimeout{10};

// The client options with binberg's defaults for PRODUCER properties the operator did not set.
kafka::ClientOptions with_defaults(kafka::ClientOptions options, const std::map<std::string, std::string>& defaults) {
  for (const auto& [name, value] : defaults) options.properties.emplace(name, value);
  return options;
}

kafka::Producer create_producer(const KafkaSourceOptions& options) {
  const kafka::ClientOptions client = with_defaults(
      options.kafka,
      {{"partitioner", "murmur2_random"}, {"compression.type", "lz4"}, {"transaction.timeout.ms", "900000"}});
  if (options.delivery == Delivery::kExactlyOnce) {
    return kafka::Producer::create(client, kafka::ProducerMode::kTransactional,
                                   "binberg-source-" + options.source_name);
  }
  return kafka::Producer::create(client, kafka::ProducerMode::kIdempotent);
}

}  // namespace

ChangeProducer::ChangeProducer(const KafkaSourceOptions& options, registry::RegistryClient& registry,
                               SourceMetrics& metrics, KafkaSourceStats& stats)
    : options_(options), registry_(registry), metrics_(metrics), stats_(stats), producer_(create_producer(options)) {}

void ChangeProducer::learn_topics(const std::vector<std::string>& topics) {
  producer_.learn_topics(topics, std::chrono::seconds(30));
}

bool ChangeProducer::ensure_schemas(PublishedTable& table, const std::shared_ptr<const TableSchema>& schema,
                                    const SourceInfo& where) {
  if (table.registered == schema) return true;
  // The reader makes a schema object per table map event: the same shape needs no new registration.
  if (table.registered && *table.registered == *schema) {
    table.registered = schema;
    return true;
  }
  envelope::EnvelopeSchemas schemas = envelope::envelope_schemas(*schema, table.topic, table.learned.history(*schema));
  try {
    // The value schema first: a refused change must not leave a new key schema behind it.
    table.value_id = registry_.register_schema(registry::value_subject(table.topic), schemas.value.to_json());
    if (schemas.key)
      table.key_id = registry_.register_schema(registry::key_subject(table.topic), schemas.key->to_json());
  } catch (const registry::RegistryError& error) {
    if (error.http_status() != 409) throw;
    table.stopped = fmt::format(
        "the registry refused the new schema of {} at {}:{} (subject {}): {}. The table stops after {}; the other "
        "tables go on. Make the change compatible (or change the subject's compatibility) and restart binberg source",
        table.source.qualified_name(), where.file, where.end_pos, registry::value_subject(table.topic), error.what(),
        table.position ? table.position->to_string() : "its snapshot");
    spdlog::error("source: {}", table.stopped);
    stats_.stopped_tables.push_back(table.source.qualified_name());
    metrics_.stopped.add(1);
    return false;
  }
  table.schemas = std::move(schemas);
  table.registered = schema;
  return true;
}

void ChangeProducer::produce(PublishedTable& table, const ChangeEvent& event, const std::string& txn_id) {
  if (!ensure_schemas(table, event.schema, event.source)) return;
  const TableSchema& schema = *event.schema;
  if (event.op == Op::kUpdate && !schema.primary_key.empty() &&
      primary_key_of(schema, *event.before) != primary_key_of(schema, *event.after)) {
    ChangeEvent old_key = event, new_key = event;
    old_key.op = Op::kDelete;
    old_key.after.reset();
    new_key.op = Op::kCreate;
    new_key.before.reset();
    produce_record(table, old_key, txn_id, "old");
    produce_record(table, new_key, txn_id, "new");
  } else {
    produce_record(table, event, txn_id, nullptr);
  }
}

void ChangeProducer::begin_transaction_if_needed() {
  if (options_.delivery == Delivery::kExactlyOnce && !in_transaction_) {
    producer_.begin_transaction();
    in_transaction_ = true;
  }
}

void ChangeProducer::hold(kafka::OutgoingRecord record) {
  const envelope::TopicPartition partition{record.topic, *record.partition};
  ++footprint_[partition];
  if (auto held = held_.find(partition); held != held_.end()) {
    producer_.send(held->second);
    held->second = std::move(record);
  } else {
    held_.emplace(partition, std::move(record));
  }
  ++stats_.records;
  ++pending_records_;
}

void ChangeProducer::produce_record(PublishedTable& table, const ChangeEvent& event, const std::string& txn_id,
                                    const char* key_change) {
  begin_transaction_if_needed();
  const TableSchema& schema = *event.schema;
  kafka::OutgoingRecord record;
  record.topic = table.topic;
  if (table.schemas->key) {
    const RowImage key = primary_key_of(event);
    record.key = avro::encode_wire_message(table.key_id, *table.schemas->key, envelope::key_datum(schema, key));
    record.partition = kafka::partition_for_key(*record.key, table.partitions);
  } else {
    record.partition = 0;  // no key to keep a row's changes in order: one partition keeps them all in order
  }
  record.value = avro::encode_wire_message(table.value_id, table.schemas->value,
                                           envelope::envelope_datum(event, options_.topic_prefix, unix_millis()));
  // Drills: poison bytes in the stream (a magic byte no Confluent decoder reads), never one half of a
  // primary-key update (their halves are joined again only when both decode).
  if (key_change == nullptr && failpoint::hit("kafka_source.poison_value")) (*record.value)[0] = '\x01';
  record.headers = {
      kafka::Header{std::string(envelope::kEventIdHeader), event.event_id},
      kafka::Header{std::string(envelope::kPositionHeader),
                    fmt::format("{} {}:{}", event.source.gtid, event.source.file, event.source.end_pos)},
      kafka::Header{std::string(envelope::kTransactionHeader), txn_id},
  };
  if (key_change != nullptr)
    record.headers.push_back(kafka::Header{std::string(envelope::kKeyChangeHeader), key_change});
  hold(std::move(record));
  table.records->add();
}

void ChangeProducer::end_transaction() {
  if (footprint_.empty()) return;
  const std::string footprint = envelope::format_footprint(footprint_);
  for (auto& [partition, record] : held_) {
    record.headers.push_back(kafka::Header{std::string(envelope::kTransactionEndHeader), footprint});
    producer_.send(record);
  }
  held_.clear();
  footprint_.clear();
}

void ChangeProducer::produce_schema_change(const PublishedTable& table, const SourceTransaction& txn,
                                           const std::string& txn_id, const std::string& change_json) {
  begin_transaction_if_needed();
  for (std::int32_t partition = 0; partition < table.partitions; ++partition) {
    hold(kafka::OutgoingRecord{table.topic,
                               partition,
                               std::nullopt,
                               std::nullopt,
                               {kafka::Header{std::string(envelope::kPositionHeader),
                                              fmt::format("{} {}:{}", txn.gtid, txn.file, txn.end_pos)},
                                kafka::Header{std::string(envelope::kTransactionHeader), txn_id},
                                kafka::Header{std::string(envelope::kSchemaChangeHeader), change_json}}});
  }
}

std::size_t ChangeProducer::save(const kafka::OutgoingRecord& record) {
  if (options_.delivery == Delivery::kExactlyOnce) {
    if (!in_transaction_) producer_.begin_transaction();
    producer_.send(record);
    producer_.commit_transaction();
    in_transaction_ = false;
  } else {
    producer_.flush(kFlushTimeout);
    failpoint::hit("kafka_source.after_flush");
    producer_.send(record);
    producer_.flush(kFlushTimeout);
  }
  return std::exchange(pending_records_, 0);
}

}  // namespace binberg::publish
