#include "sink/sink_reader.h"

#include <gtest/gtest.h>

#include <variant>

#include "avro/wire_format.h"
#include "core/error.h"
#include "envelope/change_envelope.h"
#include "kafka/admin.h"
#include "kafka/producer.h"
#include "registry/registry_client.h"
#include "support/test_services.h"

namespace binberg::sink {
namespace {

using namespace std::chrono_literals;

kafka::ClientOptions client() { return kafka::ClientOptions{binberg::testing::stack().kafka_bootstrap_servers(), {}}; }

std::shared_ptr<const TableSchema> orders() {
  TableSchema table{"shop", "orders", {}, {0}};
  Column id;
  id.name = "id";
  id.type = SourceType::kBigInt;
  id.nullable = false;
  Column note;
  note.name = "note";
  note.type = SourceType::kVarchar;
  note.max_bytes = 40;
  note.charset = "utf8mb4";
  table.columns = {id, note};
  return std::make_shared<const TableSchema>(std::move(table));
}

ChangeEvent insert(const std::shared_ptr<const TableSchema>& table, std::int64_t id, std::uint32_t row) {
  ChangeEvent event;
  event.op = Op::kCreate;
  event.schema = table;
  event.after = RowImage{Value(id), Value(Text{"note " + std::to_string(id)})};
  event.source = SourceInfo{1, "0-1-7", "binlog.000001", 400, row, 1'700'000'000'000, "shop", "orders"};
  event.event_id = make_event_id(event.source, event.op);
  return event;
}

// Everything the reader hands over until a partition's end that follows RECORDS records.
std::vector<ReadItem> read_through_end(SinkReader& reader, std::size_t records) {
  std::vector<ReadItem> items;
  std::size_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::optional<ReadItem> item = reader.next(100ms);
    if (!item) continue;
    const bool end = std::holds_alternative<kafka::PartitionEnd>(*item);
    seen += end ? 0 : 1;
    items.push_back(std::move(*item));
    if (end && seen == records) return items;
  }
  ADD_FAILURE() << "no partition end after " << records << " records; " << seen << " read";
  return items;
}

std::string error_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
}

// The reader hands records over in order with their partition's end behind them, decoded as the
// sink would decode them: a change with its key, a key that is not the row's, and a tombstone and
// bytes that are no change each carrying their error. Records below the skip offset and schema
// change records stay undecoded.
TEST(SinkReaderTest, HandsOverRecordsInOrderDecodedWithTheirErrorsAndTheEnd) {
  const std::string topic = binberg::testing::unique_name("binberg.reader");
  ASSERT_EQ(kafka::create_topic(client(), kafka::TopicSpec{topic, 1, 1, {}}), kafka::CreateResult::kCreated);
  const auto table = orders();
  const envelope::EnvelopeSchemas schemas = envelope::envelope_schemas(*table, topic);
  const registry::RegistryOptions registry_options{binberg::testing::stack().registry_url()};
  registry::RegistryClient registry(registry_options);
  const std::int32_t value_id = registry.register_schema(registry::value_subject(topic), schemas.value.to_json());
  const std::int32_t key_id = registry.register_schema(registry::key_subject(topic), schemas.key->to_json());
  const auto value_of = [&](const ChangeEvent& event) {
    return avro::encode_wire_message(value_id, schemas.value, envelope::envelope_datum(event, "test", 0));
  };
  const auto key_of = [&](std::int64_t id) {
    return avro::encode_wire_message(key_id, *schemas.key, envelope::key_datum(*table, RowImage{Value(id)}));
  };

  auto producer = kafka::Producer::create(client(), kafka::ProducerMode::kIdempotent);
  const std::vector<kafka::Header> headers = {{"binberg.txn", "0-1-7"}, {"binberg.txn", "0-1-8"}};
  producer.send(kafka::OutgoingRecord{topic, 0, key_of(1), value_of(insert(table, 1, 0)), {}});       // skipped
  producer.send(kafka::OutgoingRecord{topic, 0, key_of(2), value_of(insert(table, 2, 1)), headers});  // a change
  producer.send(kafka::OutgoingRecord{topic, 0, key_of(9), value_of(insert(table, 3, 2)), {}});       // mis-keyed
  producer.send(kafka::OutgoingRecord{topic, 0, key_of(4), std::nullopt, {}});                        // a tombstone
  producer.send(kafka::OutgoingRecord{topic, 0, key_of(5), std::string("\x01not avro", 9), {}});      // no change
  producer.send(kafka::OutgoingRecord{
      topic, 0, std::nullopt, std::nullopt, {{std::string(envelope::kSchemaChangeHeader), "{}"}}});  // a DDL
  producer.flush(30s);

  auto consumer = kafka::Consumer::create(kafka::ConsumerOptions{client(), binberg::testing::unique_name("g"), true});
  consumer.assign({kafka::PartitionStart{topic, 0, 0}});
  SinkReader reader(consumer, registry_options, {{{topic, 0}, 1}}, 2);
  const std::vector<ReadItem> items = read_through_end(reader, 6);
  std::vector<ReadRecord> records;
  for (const ReadItem& item : items) {
    if (const auto* read = std::get_if<ReadRecord>(&item)) records.push_back(*read);
  }
  ASSERT_EQ(records.size(), 6u);
  ASSERT_TRUE(std::holds_alternative<kafka::PartitionEnd>(items.back())) << "the end comes after every record";
  for (std::size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i].record.offset, static_cast<std::int64_t>(i));

  EXPECT_FALSE(records[0].event || records[0].event_error || records[0].key || records[0].key_error)
      << "below the skip offset: handed over as read";

  ASSERT_TRUE(records[1].event) << error_of(records[1].event_error);
  EXPECT_EQ(records[1].event->event_id, insert(table, 2, 1).event_id);
  EXPECT_EQ(records[1].event->after, insert(table, 2, 1).after);
  EXPECT_EQ(records[1].key, RowImage{Value(std::int64_t{2})});
  EXPECT_EQ(records[1].headers.at("binberg.txn"), "0-1-8") << "a repeated header keeps its last value";

  ASSERT_TRUE(records[2].event);
  EXPECT_EQ(records[2].key, RowImage{Value(std::int64_t{9})}) << "the key as the record has it, for the audit gate";

  EXPECT_FALSE(records[3].event);
  EXPECT_NE(error_of(records[3].event_error).find("tombstone"), std::string::npos);
  EXPECT_FALSE(records[4].event);
  EXPECT_NE(error_of(records[4].event_error).find("magic"), std::string::npos) << error_of(records[4].event_error);
  EXPECT_FALSE(records[5].event || records[5].event_error || records[5].key || records[5].key_error)
      << "a schema change record is not decoded: the sink reads its header only";

  EXPECT_FALSE(reader.next(300ms)) << "nothing after the end";
}

}  // namespace
}  // namespace binberg::sink
