#include "sink/dead_letters.h"

#include <fmt/format.h>

#include <algorithm>

#include "avro/encoding.h"
#include "avro/wire_format.h"
#include "core/assert.h"
#include "core/error.h"
#include "envelope/change_envelope.h"
#include "envelope/transaction_footprint.h"
#include "kafka/admin.h"
#include "kafka/partitioner.h"
#include "sink/record_bytes.h"

namespace binberg::sink {
namespace {

std::optional<std::string> header_value(const kafka::ConsumedRecord& record, std::string_view name) {
  for (const kafka::Header& header : record.headers) {
    if (header.name == name) return header.value;
  }
  return std::nullopt;
}

// Every record of TOPIC's partitions, oldest first in each; none when TOPIC does not exist.
std::vector<kafka::ConsumedRecord> read_topic(const kafka::ClientOptions& client, const std::string& topic,
                                              std::chrono::milliseconds timeout) {
  const auto partitions = kafka::partition_count_if_exists(client, topic, timeout);
  if (!partitions) return {};
  std::vector<kafka::PartitionStart> starts;
  for (std::int32_t partition = 0; partition < *partitions; ++partition) starts.push_back({topic, partition, 0});
  return kafka::read_to_end(kafka::ConsumerOptions{client, "binberg-dlq-reader", true}, starts, timeout);
}

}  // namespace

std::string RecordOrigin::to_string() const { return fmt::format("{}/{}@{}", topic, partition, offset); }

RecordOrigin RecordOrigin::parse(const std::string& text) {
  const auto at = text.rfind('@'), slash = text.rfind('/', at);
  try {
    if (at == std::string::npos || slash == std::string::npos || slash == 0) throw std::invalid_argument(text);
    std::size_t used_partition = 0, used_offset = 0;
    RecordOrigin origin{text.substr(0, slash), std::stoi(text.substr(slash + 1, at - slash - 1), &used_partition),
                        std::stoll(text.substr(at + 1), &used_offset)};
    if (used_partition != at - slash - 1 || used_offset != text.size() - at - 1) throw std::invalid_argument(text);
    return origin;
  } catch (const std::logic_error&) {
    fail("'{}' is not <topic>/<partition>@<offset>", text);
  }
}

std::vector<kafka::Header> diverted_headers(const kafka::ConsumedRecord& record, const std::string& reason) {
  std::vector<kafka::Header> headers = record.headers;
  headers.push_back({std::string(kErrorHeader), reason});
  headers.push_back(
      {std::string(kOriginHeader), RecordOrigin{record.topic, record.partition, record.offset}.to_string()});
  headers.push_back({std::string(kOriginTimestampHeader), std::to_string(record.timestamp_ms)});
  return headers;
}

std::vector<DeadLetter> read_dead_letters(const kafka::ClientOptions& client, const std::string& topic,
                                          std::chrono::milliseconds timeout) {
  const std::string dlq = topic + std::string(kDeadLetterSuffix);
  std::vector<DeadLetter> letters;
  for (kafka::ConsumedRecord& record : read_topic(client, dlq, timeout)) {
    DeadLetter letter;
    const auto origin = header_value(record, kOriginHeader);
    if (!origin)
      fail("{} [{}] offset {} has no {} header: not a dead letter of binberg sink", dlq, record.partition,
           record.offset, kOriginHeader);
    letter.origin = RecordOrigin::parse(*origin);
    letter.error = header_value(record, kErrorHeader).value_or("");
    const auto timestamp = header_value(record, kOriginTimestampHeader);
    letter.origin_timestamp_ms = timestamp ? std::stoll(*timestamp) : 0;
    letter.record = std::move(record);
    letters.push_back(std::move(letter));
  }
  std::stable_sort(letters.begin(), letters.end(),
                   [](const DeadLetter& a, const DeadLetter& b) { return a.record.offset < b.record.offset; });
  return letters;
}

std::map<RecordOrigin, RecordOrigin> replayed_origins(const kafka::ClientOptions& client, const std::string& topic,
                                                      std::chrono::milliseconds timeout) {
  std::map<RecordOrigin, RecordOrigin> replayed;
  for (const kafka::ConsumedRecord& record : read_topic(client, topic, timeout)) {
    if (const auto of = header_value(record, kReplayOfHeader)) {
      replayed.emplace(RecordOrigin::parse(*of), RecordOrigin{record.topic, record.partition, record.offset});
    }
  }
  return replayed;
}

RecordDecoder::RecordDecoder(registry::RegistryOptions options)
    : registry_(std::make_shared<registry::RegistryClient>(std::move(options))),
      fetch_([registry = registry_](std::int32_t id) { return registry->schema_by_id(id); }) {}

RecordDecoder::RecordDecoder(SchemaFetch fetch) : fetch_(std::move(fetch)) {}

registry::RegistryClient& RecordDecoder::registry() {
  BINBERG_ASSERT(registry_ != nullptr, "a record decoder without a registry was asked for one");
  return *registry_;
}

const RecordDecoder::ValueSchema& RecordDecoder::value_schema(std::int32_t id) {
  auto it = values_.find(id);
  if (it == values_.end()) {
    avro::Schema schema = avro::Schema::parse(fetch_(id));
    auto table = std::make_shared<const TableSchema>(envelope::table_schema_of(schema));
    it = values_.emplace(id, ValueSchema{std::move(schema), std::move(table)}).first;
  }
  return it->second;
}

ChangeEvent RecordDecoder::change(std::string_view value) {
  return reading("value", [&] {
    const ValueSchema& schema = value_schema(avro::parse_wire_message(value).schema_id);
    return envelope::change_event_from_datum(
        avro::decode_wire_message(value, [&](std::int32_t) { return schema.avro; }), schema.table);
  });
}

RowImage RecordDecoder::key(std::string_view key, const TableSchema& table) {
  return reading("key", [&] {
    const avro::Value datum = avro::decode_wire_message(key, [&](std::int32_t id) {
      auto it = keys_.find(id);
      if (it == keys_.end()) it = keys_.emplace(id, avro::Schema::parse(fetch_(id))).first;
      return std::optional<avro::Schema>(it->second);
    });
    return envelope::key_from_datum(table, datum);
  });
}

kafka::OutgoingRecord replay_record(const DeadLetter& dead, const ReplayEncoding& encoding, RecordDecoder& decoder,
                                    std::int32_t partitions) {
  const std::string where = fmt::format("dead letter {}{}@{} (from {})", dead.origin.topic, kDeadLetterSuffix,
                                        dead.record.offset, dead.origin.to_string());
  if (!dead.record.value) fail("{}: it has no value (a tombstone); there is no change to replay", where);
  if (header_value(dead.record, envelope::kKeyChangeHeader)) {
    fail("{}: it is one half of a primary-key update; binberg cannot replay one half alone yet", where);
  }
  kafka::OutgoingRecord out;
  out.topic = dead.origin.topic;
  ChangeEvent event;
  try {
    if (!encoding.reencode) {
      out.value = *dead.record.value;
      event = decoder.change(*out.value);
    } else {
      const std::string& value = *dead.record.value;
      if (value.size() < avro::kWireHeaderSize) fail("{} bytes are too few for a change record", value.size());
      const std::int32_t id = encoding.schema_id
                                  ? *encoding.schema_id
                                  : decoder.registry().latest_version(registry::value_subject(out.topic)).id;
      const avro::Schema schema = avro::Schema::parse(decoder.registry().schema_by_id(id));
      const avro::Value datum = avro::decode(schema, std::string_view(value).substr(avro::kWireHeaderSize));
      out.value = avro::encode_wire_message(id, schema, datum);
      event = decoder.change(*out.value);
    }
  } catch (const Error& error) {
    fail("{} does not decode{}: {}{}", where, encoding.reencode ? " with the registered schema" : " as it is",
         error.what(),
         encoding.reencode ? "" : " (replay it with --reencode to read its Avro body with the registered schema)");
  }
  const TableSchema& table = *event.schema;
  if (table.primary_key.empty()) {
    out.partition = 0;  // the source keeps a keyless table in one partition
  } else {
    const RowImage key = primary_key_of(event);
    bool original_key = false;  // its own key bytes name its row: they keep it in its key's partition
    try {
      original_key =
          dead.record.key && decoder.key(*dead.record.key, table) == key && dead.origin.partition < partitions;
    } catch (const registry::RegistryError& error) {
      if (error.http_status() != 404) throw;
    } catch (const Error&) {
    }
    if (original_key) {
      out.key = dead.record.key;
      out.partition = dead.origin.partition;
    } else {
      const registry::SubjectVersion key_schema = decoder.registry().latest_version(registry::key_subject(out.topic));
      out.key = avro::encode_wire_message(key_schema.id, avro::Schema::parse(key_schema.schema),
                                          envelope::key_datum(table, key));
      out.partition = kafka::partition_for_key(*out.key, partitions);
    }
  }
  static const std::vector<std::string_view> kDropped = {kErrorHeader,
                                                         kOriginHeader,
                                                         kOriginTimestampHeader,
                                                         kReplayOfHeader,
                                                         kReplayOfTimestampHeader,
                                                         envelope::kTransactionHeader,
                                                         envelope::kTransactionEndHeader};
  for (const kafka::Header& header : dead.record.headers) {
    if (std::find(kDropped.begin(), kDropped.end(), header.name) == kDropped.end()) out.headers.push_back(header);
  }
  out.headers.push_back({std::string(kReplayOfHeader), dead.origin.to_string()});
  out.headers.push_back({std::string(kReplayOfTimestampHeader), std::to_string(dead.origin_timestamp_ms)});
  return out;
}

}  // namespace binberg::sink
