#include "drill/intruder.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "avro/wire_format.h"
#include "envelope/change_envelope.h"
#include "kafka/admin.h"
#include "kafka/producer.h"
#include "registry/registry_client.h"

namespace binberg::drill {
namespace {

constexpr std::chrono::seconds kKafkaTimeout{60};
constexpr std::int64_t kOriginalsPerPartition = 20;

kafka::ClientOptions client_of(const DrillRun& run) { return {run.stack().kafka_bootstrap_servers(), {}}; }

}  // namespace

Intruder::Intruder(DrillRun& run, std::string topic) : run_(run), topic_(std::move(topic)) {}

std::vector<kafka::ConsumedRecord> Intruder::originals() const {
  std::vector<kafka::ConsumedRecord> originals;
  const std::int32_t partitions = kafka::partition_count(client_of(run_), topic_);
  for (std::int32_t partition = 0; partition < partitions; ++partition) {
    for (kafka::ConsumedRecord& record :
         kafka::read_range(kafka::ConsumerOptions{client_of(run_), run_.prefix() + "-intruder", true},
                           {topic_, partition, 0}, kOriginalsPerPartition, kKafkaTimeout)) {
      // The source's own records only, not an earlier round's intruders.
      const bool intruder = std::any_of(record.headers.begin(), record.headers.end(),
                                        [](const kafka::Header& header) { return header.name == kIntruderHeader; });
      if (!intruder && record.key && record.value && record.value->size() > avro::kWireHeaderSize)
        originals.push_back(std::move(record));
    }
  }
  if (originals.size() < 2) throw DrillAborted(fmt::format("{} holds too few records to copy", topic_));
  return originals;
}

// ORIGINAL's change at a source position past any the drill's binlog reaches. The sink's position
// check would otherwise drop the copy as a repeat before its key gate saw it: under load the source
// publishes newer changes into the partition between any position the drill reads and the copy's
// arrival (the binlog's end when written was tried: in a loaded run none reached the gate).
std::string Intruder::mis_keyed_value(const kafka::ConsumedRecord& original) const {
  registry::RegistryClient registry(registry::RegistryOptions{run_.stack().registry_url()});
  const std::int32_t id = avro::parse_wire_message(*original.value).schema_id;
  const avro::Schema schema = avro::Schema::parse(registry.schema_by_id(id));
  const auto table = std::make_shared<const TableSchema>(envelope::table_schema_of(schema));
  ChangeEvent change = envelope::change_event_from_datum(
      avro::decode_wire_message(*original.value, [&](std::int32_t) -> std::optional<avro::Schema> { return schema; }),
      table);
  change.source.file = "mariadb-bin.999999";
  change.source.end_pos = 4;
  return avro::encode_wire_message(id, schema, envelope::envelope_datum(change, "intruder", 0));
}

void Intruder::write(IntruderKind kind, std::size_t count) {
  const std::vector<kafka::ConsumedRecord> copies = originals();
  kafka::Producer producer = kafka::Producer::create(client_of(run_), kafka::ProducerMode::kIdempotent);
  for (std::size_t i = 0; i < count; ++i, ++written_) {
    const kafka::ConsumedRecord& original = copies[written_ % copies.size()];
    kafka::OutgoingRecord record{topic_,
                                 original.partition,
                                 original.key,
                                 original.value,
                                 {kafka::Header{std::string(kIntruderHeader), std::to_string(written_)}}};
    if (kind == IntruderKind::kPoison) {
      (*record.value)[0] = '\x01';  // not the wire format's magic byte 0
    } else {
      // Under the key of the next original whose key differs, in that key's partition.
      std::size_t other = written_ + 1;
      while (copies[other % copies.size()].key == original.key) ++other;
      const kafka::ConsumedRecord& owner = copies[other % copies.size()];
      record.key = owner.key;
      record.partition = owner.partition;
      record.value = mis_keyed_value(original);
    }
    producer.send(record);
  }
  producer.flush(kKafkaTimeout);
}

DivertedRecords Intruder::diverted(std::string_view suffix) const {
  const std::string topic = topic_ + std::string(suffix);
  DivertedRecords diverted;
  const auto partitions = kafka::partition_count_if_exists(client_of(run_), topic);
  if (!partitions) return diverted;
  std::vector<kafka::PartitionStart> starts;
  for (std::int32_t partition = 0; partition < *partitions; ++partition) starts.push_back({topic, partition, 0});
  for (const kafka::ConsumedRecord& record : kafka::read_to_end(
           kafka::ConsumerOptions{client_of(run_), run_.prefix() + "-diverted", true}, starts, kKafkaTimeout)) {
    std::optional<std::string> mark;
    for (const kafka::Header& header : record.headers) {
      if (header.name == kIntruderHeader) mark = header.value;
    }
    if (mark) {
      diverted.intruders.insert(*mark);
    } else {
      ++diverted.others;
    }
  }
  return diverted;
}

}  // namespace binberg::drill
