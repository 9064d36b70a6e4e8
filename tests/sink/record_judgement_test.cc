// What the sink makes of one record it cannot use (issue 25, item 7): whatever is wrong with its
// value, key or headers, the verdict is a dead letter whose reason names what was wrong and where
// (topic, partition, offset, which header); nothing escapes as an exception, which would end the
// session and meet the same record again at the next one, forever. Records from sample_records.h:
// real ones, broken one part at a time.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "envelope/change_envelope.h"
#include "envelope/transaction_footprint.h"
#include "sample_records.h"
#include "sink/dead_letters.h"
#include "sink/record_judgement.h"
#include "sink/sink_reader.h"

namespace binberg::sink {
namespace {

using samples::with_header;

RecordDecoder sample_decoder() { return RecordDecoder(samples::schema_by_id); }

ReadRecord read(kafka::ConsumedRecord record) {
  RecordDecoder decoder = sample_decoder();
  return decode_record(std::move(record), decoder, Decoding::kDecode);
}

// The first record of the samples at partition 2, offset 7: where every message must say it was.
kafka::ConsumedRecord an_insert() {
  kafka::ConsumedRecord record = samples::records().front();
  record.partition = 2;
  record.offset = 7;
  return record;
}

void expect_names(const std::string& reason, const std::string& what) {
  EXPECT_NE(reason.find(std::string(samples::kTopic) + " [2] offset 7"), std::string::npos) << reason;
  EXPECT_NE(reason.find(what), std::string::npos) << reason;
}

// The verdict on a change record's value: its change, or why it goes to the dead-letter topic.
std::string value_verdict(kafka::ConsumedRecord record) {
  ReadRecord decoded = read(std::move(record));
  std::variant<ChangeEvent, std::string> change = take_change(decoded);
  if (const auto* reason = std::get_if<std::string>(&change)) return *reason;
  return "applied: " + std::get<ChangeEvent>(change).event_id;
}

TEST(RecordJudgementTest, EverySampleRecordIsReadWithoutComplaint) {
  for (const kafka::ConsumedRecord& record : samples::records()) {
    ReadRecord decoded = read(record);
    const RecordFacts facts = RecordFacts::of(decoded);
    EXPECT_FALSE(facts.malformed.has_value()) << *facts.malformed;
    if (decoded.headers.contains(envelope::kSchemaChangeHeader)) continue;
    ASSERT_TRUE(decoded.event.has_value()) << record.offset;
    EXPECT_FALSE(key_problem(decoded, *decoded.event).has_value()) << record.offset;
  }
}

TEST(RecordJudgementTest, AValueThatIsNotAChangeIsADeadLetterNamingWhereNeverAnException) {
  std::string reason;
  // A schema whose binberg.table property is malformed: a JSON type error inside the decoder.
  ASSERT_NO_THROW(reason = value_verdict(samples::with_value_schema(an_insert(), samples::kMalformedTableSchemaId)));
  expect_names(reason, "value");
  EXPECT_NE(reason.find("binberg.table"), std::string::npos) << reason;
  // Column descriptions that do not match the fields' Avro types.
  ASSERT_NO_THROW(reason = value_verdict(samples::with_value_schema(an_insert(), samples::kMismatchedColumnSchemaId)));
  expect_names(reason, "value");
  // Bytes that are no Avro of the schema, and a schema id the registry does not know.
  kafka::ConsumedRecord cut = an_insert();
  cut.value->resize(9);
  ASSERT_NO_THROW(reason = value_verdict(cut));
  expect_names(reason, "value");
  kafka::ConsumedRecord unknown = samples::with_value_schema(an_insert(), 77);
  ASSERT_NO_THROW(reason = value_verdict(unknown));
  expect_names(reason, "unknown schema id");
}

TEST(RecordJudgementTest, AKeyThatDoesNotDecodeIsAQuarantineReasonNamingWhere) {
  kafka::ConsumedRecord record = an_insert();
  record.key = record.key->substr(0, 5);  // a wire header and no Avro body
  ReadRecord decoded = read(std::move(record));
  ASSERT_TRUE(decoded.event.has_value());
  std::optional<std::string> problem;
  ASSERT_NO_THROW(problem = key_problem(decoded, *decoded.event));
  ASSERT_TRUE(problem.has_value());
  expect_names(*problem, "key");
}

TEST(RecordJudgementTest, MalformedHeadersMakeTheRecordADeadLetterNamingTheHeader) {
  const std::vector<std::pair<std::string, std::string>> broken = {
      {std::string(envelope::kTransactionEndHeader), "{\"not\": \"a footprint\"}"},
      {std::string(envelope::kTransactionEndHeader), std::string(samples::kTopic) + "/0=99999999999"},
      {std::string(envelope::kPositionHeader), "0-1-42 mariadb-bin.000003:12x4"},
      {std::string(envelope::kPositionHeader), "no position"},
      {std::string(kReplayOfHeader), "cdc.shop.orders/1@99999999999999999999"},
      {std::string(kReplayOfHeader), "{]"},
      {std::string(envelope::kKeyChangeHeader), "sideways"},
      {std::string(envelope::kSchemaChangeHeader), "{\"database\": 5"},
      {std::string(envelope::kSchemaChangeHeader), R"({"database": "shop", "statement": 7, "now": null})"},
      {std::string(envelope::kSchemaChangeHeader), R"({"database": "shop", "statement": "x", "now": {"table": []}})"},
  };
  for (const auto& [name, value] : broken) {
    SCOPED_TRACE(name + ": " + value);
    ReadRecord decoded = read(with_header(an_insert(), name, value));
    std::optional<RecordFacts> facts;
    ASSERT_NO_THROW(facts = RecordFacts::of(decoded));
    ASSERT_TRUE(facts->malformed.has_value());
    expect_names(*facts->malformed, "header " + name);
    // It stands alone: no transaction to count it in, no schema change, no replay.
    EXPECT_TRUE(facts->txn.id.empty());
    EXPECT_FALSE(facts->replay_of.has_value());
  }
}

TEST(RecordJudgementTest, ASchemaChangeRecordThatLacksItsTransactionHeadersIsMalformed) {
  kafka::ConsumedRecord ddl = samples::records().back();
  ddl.partition = 2;
  ddl.offset = 7;
  std::erase_if(ddl.headers,
                [](const kafka::Header& header) { return header.name == envelope::kTransactionEndHeader; });
  ReadRecord decoded = read(std::move(ddl));
  const RecordFacts facts = RecordFacts::of(decoded);
  ASSERT_TRUE(facts.malformed.has_value());
  expect_names(*facts.malformed, "schema change");
}

}  // namespace
}  // namespace binberg::sink
