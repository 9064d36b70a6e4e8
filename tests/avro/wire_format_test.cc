#include "avro/wire_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "avro/encoding.h"
#include "core/error.h"

namespace binberg::avro {
namespace {

using ::testing::HasSubstr;

const Schema& order_schema() {
  static const Schema schema = Schema::parse(R"({"type": "record", "name": "order", "fields": [
      {"name": "id", "type": "long"}, {"name": "note", "type": "string"}]})");
  return schema;
}

const Value kOrder = Record{{Value(std::int64_t{42}), Value("rush")}};

SchemaLookup registry_with(std::int32_t id) {
  return [id](std::int32_t wanted) -> std::optional<Schema> {
    if (wanted == id) return order_schema();
    return std::nullopt;
  };
}

void expect_error(std::string_view message, std::string_view expected) {
  try {
    decode_wire_message(message, registry_with(7));
    ADD_FAILURE() << "accepted a bad message";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(expected));
  }
}

TEST(AvroWireFormat, FramesMagicBigEndianIdAndDatum) {
  const std::string message = encode_wire_message(0x01020304, order_schema(), kOrder);
  EXPECT_EQ(message.substr(0, 5), std::string("\x00\x01\x02\x03\x04", 5));
  EXPECT_EQ(message.substr(5), encode(order_schema(), kOrder));
  const WireMessage parsed = parse_wire_message(message);
  EXPECT_EQ(parsed.schema_id, 0x01020304);
  EXPECT_EQ(parsed.datum, encode(order_schema(), kOrder));
  EXPECT_EQ(decode_wire_message(message, registry_with(0x01020304)), kOrder);
  EXPECT_EQ(wire_header(-1), std::string("\x00\xff\xff\xff\xff", 5));
  EXPECT_EQ(parse_wire_message(wire_header(-2)).schema_id, -2);
}

TEST(AvroWireFormat, RejectsBadMessagesClearly) {
  const std::string message = encode_wire_message(7, order_schema(), kOrder);
  for (std::size_t length = 0; length < kWireHeaderSize; ++length) {
    expect_error(message.substr(0, length),
                 fmt::format("message of {} bytes is shorter than the 5-byte header", length));
  }
  expect_error("\x01" + message.substr(1), "magic byte is 0x01, expected 0x00");
  expect_error(encode_wire_message(8, order_schema(), kOrder), "unknown schema id 8");
  expect_error(message.substr(0, message.size() - 1),
               "exceeds the 3 remaining bytes at byte 6 of datum of schema id 7");
  expect_error(message + "z", "1 trailing bytes after the last datum at byte 11 of datum of schema id 7");
}

}  // namespace
}  // namespace binberg::avro
