#include "sample_records.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "avro/schema.h"
#include "avro/wire_format.h"
#include "core/change_event.h"
#include "envelope/change_envelope.h"
#include "envelope/transaction_footprint.h"
#include "registry/registry_client.h"
#include "tables/schema_change.h"

namespace binberg::sink::samples {
namespace {

std::shared_ptr<const TableSchema> table() {
  static const auto schema = [] {
    auto table = std::make_shared<TableSchema>();
    table->database = "shop";
    table->table = "orders";
    table->columns = {Column{"id", SourceType::kInt, false, false, 0, 0, 0, "", {}},
                      Column{"qty", SourceType::kBigInt, false, false, 0, 0, 0, "", {}},
                      Column{"note", SourceType::kVarchar, true, false, 0, 0, 80, "utf8mb4", {}}};
    table->primary_key = {0};
    return std::shared_ptr<const TableSchema>(std::move(table));
  }();
  return schema;
}

const envelope::EnvelopeSchemas& schemas() {
  static const envelope::EnvelopeSchemas schemas = envelope::envelope_schemas(*table(), kTopic);
  return schemas;
}

RowImage row(std::int32_t id, std::int64_t qty, const char* note) {
  return {Value(std::int64_t{id}), Value(qty), note == nullptr ? Value(std::monostate{}) : Value(Text{note})};
}

ChangeEvent change(Op op, std::optional<RowImage> before, std::optional<RowImage> after, std::uint32_t row_index) {
  ChangeEvent event;
  event.op = op;
  event.before = std::move(before);
  event.after = std::move(after);
  event.source = SourceInfo{1, "0-1-42", "mariadb-bin.000003", 1234, row_index, 1'700'000'000'000, "shop", "orders"};
  event.event_id = make_event_id(event.source, op);
  event.schema = table();
  return event;
}

kafka::ConsumedRecord change_record(const ChangeEvent& event, const char* key_change) {
  const RowImage& image = event.after ? *event.after : *event.before;
  kafka::ConsumedRecord record;
  record.topic = kTopic;
  record.key = avro::encode_wire_message(kKeySchemaId, *schemas().key,
                                         envelope::key_datum(*table(), primary_key_of(*table(), image)));
  record.value = avro::encode_wire_message(kValueSchemaId, schemas().value, envelope::envelope_datum(event, "cdc", 0));
  record.headers = {{std::string(envelope::kEventIdHeader), event.event_id},
                    {std::string(envelope::kPositionHeader), "0-1-42 mariadb-bin.000003:1234"},
                    {std::string(envelope::kTransactionHeader), "0-1-42"}};
  if (key_change != nullptr) record.headers.push_back({std::string(envelope::kKeyChangeHeader), key_change});
  return record;
}

}  // namespace

std::string schema_by_id(std::int32_t id) {
  switch (id) {
    case kValueSchemaId:
      return schemas().value.to_json();
    case kKeySchemaId:
      return schemas().key->to_json();
    case kMalformedTableSchemaId: {
      nlohmann::json json = nlohmann::json::parse(schemas().value.to_json());
      json["binberg.table"]["primary_key"] = 5;
      return json.dump();
    }
    case kMismatchedColumnSchemaId: {
      nlohmann::json json = nlohmann::json::parse(schemas().value.to_json());
      for (auto& field : json["fields"]) {  // the id column described as text, its field still an int
        if (field["name"] == "before") field["type"][1]["fields"][0]["binberg.column"]["type"] = "varchar";
      }
      return json.dump();
    }
    default:
      throw registry::RegistryError(404, 40403, fmt::format("schema {} not found", id));
  }
}

std::vector<kafka::ConsumedRecord> records() {
  std::vector<kafka::ConsumedRecord> records = {
      change_record(change(Op::kCreate, std::nullopt, row(1, 10, "first"), 0), nullptr),
      change_record(change(Op::kUpdate, row(1, 10, "first"), row(1, 11, nullptr), 1), nullptr),
      change_record(change(Op::kDelete, row(1, 11, nullptr), std::nullopt, 2), nullptr),
      change_record(change(Op::kDelete, row(2, 5, "old key"), std::nullopt, 3), "old"),
      change_record(change(Op::kCreate, std::nullopt, row(3, 5, "new key"), 3), "new"),
  };
  tables::PublishedSchemaChange ddl{"shop", "ALTER TABLE orders ADD COLUMN w INT", table()};
  kafka::ConsumedRecord schema_change;
  schema_change.topic = kTopic;
  schema_change.headers = {
      {std::string(envelope::kPositionHeader), "0-1-43 mariadb-bin.000003:1500"},
      {std::string(envelope::kTransactionHeader), "0-1-43"},
      {std::string(envelope::kSchemaChangeHeader), ddl.to_json()},
      {std::string(envelope::kTransactionEndHeader), envelope::format_footprint({{{kTopic, 0}, 1}})}};
  records.back().headers.push_back(
      {std::string(envelope::kTransactionEndHeader), envelope::format_footprint({{{kTopic, 0}, 5}})});
  records.push_back(std::move(schema_change));
  for (std::size_t offset = 0; offset < records.size(); ++offset) {
    records[offset].offset = static_cast<std::int64_t>(offset);
    records[offset].timestamp_ms = 1'700'000'000'000 + static_cast<std::int64_t>(offset);
  }
  return records;
}

kafka::ConsumedRecord with_value_schema(kafka::ConsumedRecord record, std::int32_t schema_id) {
  std::string& value = *record.value;
  value = avro::encode_wire_message(schema_id, schemas().value,
                                    avro::decode_wire_message(value, [](std::int32_t) { return schemas().value; }));
  return record;
}

kafka::ConsumedRecord with_header(kafka::ConsumedRecord record, const std::string& name, const std::string& value) {
  auto it = std::find_if(record.headers.begin(), record.headers.end(),
                         [&](const kafka::Header& header) { return header.name == name; });
  if (it == record.headers.end()) {
    record.headers.push_back({name, value});
  } else {
    it->value = value;
  }
  return record;
}

}  // namespace binberg::sink::samples
