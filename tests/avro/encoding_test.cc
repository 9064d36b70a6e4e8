#include "avro/encoding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "core/error.h"

namespace binberg::avro {
namespace {

using ::testing::HasSubstr;

std::string bytes_of(std::initializer_list<int> bytes) {
  std::string out;
  for (const int byte : bytes) out.push_back(static_cast<char>(byte));
  return out;
}

template <typename T>
Value v(T value) {
  return Value(value);
}

void expect_decode_error(const Schema& schema, const std::string& datum, std::string_view message) {
  try {
    decode(schema, datum);
    ADD_FAILURE() << "decoded invalid datum for " << schema.to_json();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

// Encodings given by the specification's examples.
TEST(AvroEncoding, MatchesSpecificationExamples) {
  const Schema long_schema = Schema::parse(R"("long")");
  const std::pair<std::int64_t, std::string> longs[] = {
      {0, bytes_of({0x00})}, {-1, bytes_of({0x01})},  {1, bytes_of({0x02})},        {-2, bytes_of({0x03})},
      {2, bytes_of({0x04})}, {-64, bytes_of({0x7f})}, {64, bytes_of({0x80, 0x01})},
  };
  for (const auto& [number, encoded] : longs) {
    EXPECT_EQ(encode(long_schema, Value(number)), encoded) << number;
    EXPECT_EQ(decode(long_schema, encoded), Value(number));
  }
  EXPECT_EQ(encode(Schema::parse(R"("string")"), Value("foo")), bytes_of({0x06, 0x66, 0x6f, 0x6f}));
  EXPECT_EQ(encode(Schema::parse(R"("float")"), Value(1.0f)), bytes_of({0x00, 0x00, 0x80, 0x3f}));
  EXPECT_EQ(encode(Schema::parse(R"("double")"), Value(-2.0)), bytes_of({0, 0, 0, 0, 0, 0, 0, 0xc0}));
  // Union ["null","string"]: "a" is branch 1, then the string.
  EXPECT_EQ(encode(Schema::parse(R"(["null", "string"])"), Value(Union(1, Value("a")))), bytes_of({0x02, 0x02, 'a'}));
  // An array of longs {3, 27}: one block of two items, then the terminating zero count.
  EXPECT_EQ(encode(Schema::parse(R"({"type": "array", "items": "long"})"),
                   Value(Array{v(std::int64_t{3}), v(std::int64_t{27})})),
            bytes_of({0x04, 0x06, 0x36, 0x00}));
}

TEST(AvroEncoding, IntegerLimitsRoundTrip) {
  const Schema int_schema = Schema::parse(R"("int")");
  const Schema long_schema = Schema::parse(R"("long")");
  for (const std::int32_t i : {std::numeric_limits<std::int32_t>::min(), -1, 0, 1, 63, 64, 8191, 8192,
                               std::numeric_limits<std::int32_t>::max()}) {
    EXPECT_EQ(decode(int_schema, encode(int_schema, Value(i))), Value(i));
  }
  for (const std::int64_t l : {std::numeric_limits<std::int64_t>::min(), std::int64_t{-1}, std::int64_t{1} << 40,
                               std::numeric_limits<std::int64_t>::max()}) {
    EXPECT_EQ(decode(long_schema, encode(long_schema, Value(l))), Value(l));
  }
  EXPECT_EQ(encode(long_schema, Value(std::numeric_limits<std::int64_t>::min())).size(), 10u);
}

// One record with every type, every logical type and unions nested in arrays, maps and records.
constexpr std::string_view kEverything = R"({"type": "record", "name": "Everything", "namespace": "t", "fields": [
  {"name": "n", "type": "null"},
  {"name": "b", "type": "boolean"},
  {"name": "i", "type": "int"},
  {"name": "l", "type": "long"},
  {"name": "f", "type": "float"},
  {"name": "d", "type": "double"},
  {"name": "by", "type": "bytes"},
  {"name": "s", "type": "string"},
  {"name": "e", "type": {"type": "enum", "name": "Suit", "symbols": ["SPADES", "HEARTS", "CLUBS"]}},
  {"name": "fx", "type": {"type": "fixed", "name": "Four", "size": 4}},
  {"name": "a", "type": {"type": "array", "items": ["null", "long", {"type": "array", "items": "string"}]}},
  {"name": "m", "type": {"type": "map", "values": ["null", "Suit", {"type": "map", "values": "double"}]}},
  {"name": "u", "type": ["null", {"type": "record", "name": "Inner", "fields": [
      {"name": "x", "type": ["int", "string"]}, {"name": "four", "type": "Four"}]}]},
  {"name": "dec_bytes", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
  {"name": "dec_fixed", "type": {"type": "fixed", "name": "Dec", "size": 5, "logicalType": "decimal", "precision": 11}},
  {"name": "uuid", "type": {"type": "string", "logicalType": "uuid"}},
  {"name": "date", "type": {"type": "int", "logicalType": "date"}},
  {"name": "tmillis", "type": {"type": "int", "logicalType": "time-millis"}},
  {"name": "tmicros", "type": {"type": "long", "logicalType": "time-micros"}},
  {"name": "tsmillis", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "tsmicros", "type": {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true}},
  {"name": "ltsmillis", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
  {"name": "ltsmicros", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
  {"name": "list", "type": {"type": "record", "name": "List", "fields": [
      {"name": "value", "type": "int"}, {"name": "next", "type": ["null", "List"]}]}}
]})";

Value linked_list(int length) {
  Value tail = Union(0, Value());
  for (int i = length; i > 0; --i) tail = Union(1, Value(Record{{v(std::int32_t{i}), tail}}));
  return tail.as<Union>().value();
}

Value everything_value() {
  Map m;
  m.emplace("null", Union(0, Value()));
  m.emplace("suit", Union(1, Value(Enum{2})));
  m.emplace("nested", Union(2, Value(Map{{"pi", v(3.25)}, {"e", v(-2.5)}})));
  return Record{{
      Value(),
      v(true),
      v(std::int32_t{-123456}),
      v(std::int64_t{1} << 50),
      v(1.5f),
      v(-0.125),
      Value(Bytes{0x00, 0xff, 0x10}),
      Value("héllo"),
      Value(Enum{1}),
      Value(Bytes{1, 2, 3, 4}),
      Value(Array{Union(0, Value()), Union(1, v(std::int64_t{-7})), Union(2, Value(Array{Value("x"), Value("")}))}),
      Value(std::move(m)),
      Value(Union(1, Value(Record{{Union(1, Value("inner")), Value(Bytes{9, 9, 9, 9})}}))),
      Value(Bytes{0x30, 0x39}),                    // decimal 123.45 as two's complement 12345
      Value(Bytes{0xff, 0xff, 0xff, 0xcf, 0xc7}),  // decimal -12345 in 5 bytes
      Value("6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
      v(std::int32_t{19000}),
      v(std::int32_t{86399999}),
      v(std::int64_t{86399999999}),
      v(std::int64_t{1700000000123}),
      v(std::int64_t{1700000000123456}),
      v(std::int64_t{-1}),
      v(std::int64_t{0}),
      linked_list(5),
  }};
}

TEST(AvroEncoding, EveryTypeRoundTrips) {
  const Schema schema = Schema::parse(kEverything);
  const Value value = everything_value();
  const std::string encoded = encode(schema, value);
  EXPECT_EQ(decode(schema, encoded), value);

  Decoder decoder(encoded);
  skip(schema.root(), decoder);
  EXPECT_EQ(decoder.remaining(), 0u);
}

TEST(AvroEncoding, UnionBranchFollowsValueKindWhenNotGiven) {
  const Schema schema = Schema::parse(R"(["null", "long", "string", {"type": "fixed", "name": "F", "size": 2}])");
  EXPECT_EQ(decode(schema, encode(schema, v(std::int64_t{5}))), Value(Union(1, v(std::int64_t{5}))));
  EXPECT_EQ(decode(schema, encode(schema, Value())), Value(Union(0, Value())));
  EXPECT_EQ(decode(schema, encode(schema, Value(Bytes{1, 2}))), Value(Union(3, Value(Bytes{1, 2}))));
  EXPECT_THROW(encode(schema, v(std::int32_t{5})), Error);  // no int branch: no silent widening
}

TEST(AvroEncoding, RejectsValuesThatDoNotFitNamingThePath) {
  const Schema schema = Schema::parse(kEverything);
  Value value = everything_value();
  value.as<Record>().fields[3] = Value("not a long");
  try {
    encode(schema, value);
    ADD_FAILURE() << "encoded a string as long";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("a string value does not fit long at /fields/l"));
  }
  value = everything_value();
  value.as<Record>().fields[10].as<Array>()[2] = Union(2, Value(Array{v(std::int32_t{1})}));
  EXPECT_THROW(
      {
        try {
          encode(schema, value);
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), HasSubstr("at /fields/a/2/2/0"));
          throw;
        }
      },
      Error);
  value = everything_value();
  value.as<Record>().fields[9] = Value(Bytes{1});
  EXPECT_THROW(encode(schema, value), Error);
  value = everything_value();
  value.as<Record>().fields[8] = Value(Enum{3});
  EXPECT_THROW(encode(schema, value), Error);
  EXPECT_THROW(encode(schema, Value(Record{})), Error);
  EXPECT_THROW(encode(Schema::parse(R"(["null", "int"])"), Value(Union(2, Value()))), Error);
}

TEST(AvroEncoding, ReadsBlocksWithNegativeCountsAndByteSizes) {
  const Schema schema = Schema::parse(R"({"type": "array", "items": "long"})");
  // Block of -2 items (4 bytes? no: 2 bytes), then a plain block of 1 item, then the end.
  const std::string datum = bytes_of({0x03, 0x04, 0x02, 0x04, 0x02, 0x06, 0x00});
  EXPECT_EQ(decode(schema, datum), Value(Array{v(std::int64_t{1}), v(std::int64_t{2}), v(std::int64_t{3})}));
  Decoder decoder(datum);
  skip(schema.root(), decoder);
  EXPECT_EQ(decoder.remaining(), 0u);

  const Schema map_schema = Schema::parse(R"({"type": "map", "values": "int"})");
  const std::string map_datum = bytes_of({0x01, 0x06, 0x02, 'k', 0x08, 0x00});
  EXPECT_EQ(decode(map_schema, map_datum), Value(Map{{"k", v(std::int32_t{4})}}));
}

TEST(AvroEncoding, RejectsEveryTruncation) {
  const Schema schema = Schema::parse(kEverything);
  const std::string encoded = encode(schema, everything_value());
  for (std::size_t length = 0; length < encoded.size(); ++length) {
    EXPECT_THROW(decode(schema, encoded.substr(0, length)), Error) << length;
    Decoder decoder(std::string_view(encoded).substr(0, length));
    EXPECT_THROW(skip(schema.root(), decoder), Error) << length;
  }
  expect_decode_error(schema, encoded + "x", "1 trailing bytes after the last datum");
}

TEST(AvroEncoding, RejectsMalformedPrimitivesNamingTheOffset) {
  const Schema long_schema = Schema::parse(R"("long")");
  const Schema int_schema = Schema::parse(R"("int")");
  expect_decode_error(long_schema, "", "truncated long at byte 0 of datum");
  expect_decode_error(long_schema, bytes_of({0x80, 0x80}), "truncated long at byte 0");
  expect_decode_error(long_schema, std::string(10, '\xff') + '\x01', "overlong or out-of-range long at byte 0");
  expect_decode_error(long_schema, std::string(9, '\xff') + '\x02', "overlong or out-of-range long");
  expect_decode_error(int_schema, bytes_of({0xff, 0xff, 0xff, 0xff, 0x10}), "overlong or out-of-range int");
  expect_decode_error(Schema::parse(R"("boolean")"), bytes_of({0x02}), "invalid boolean byte 2 at byte 0");
  expect_decode_error(Schema::parse(R"("double")"), bytes_of({1, 2, 3}), "truncated double");

  const Schema record = Schema::parse(R"({"type": "record", "name": "r", "fields": [
      {"name": "a", "type": "int"}, {"name": "s", "type": "string"}]})");
  expect_decode_error(record, bytes_of({0x02, 0x01}), "negative length -1 at byte 1");
  expect_decode_error(record, bytes_of({0x02, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 'a'}),
                      "exceeds the 1 remaining bytes");
  expect_decode_error(Schema::parse(R"(["null", "int"])"), bytes_of({0x04}), "union branch 2 out of range");
  expect_decode_error(Schema::parse(R"(["null", "int"])"), bytes_of({0x01}), "union branch -1 out of range");
  expect_decode_error(Schema::parse(R"({"type": "enum", "name": "e", "symbols": ["A"]})"), bytes_of({0x02}),
                      "enum index 1 out of range");
  expect_decode_error(Schema::parse(R"({"type": "map", "values": "null"})"),
                      bytes_of({0x04, 0x02, 'k', 0x02, 'k', 0x00}), "duplicate map key at byte 3");
}

// A decode error keeps its datum path after the message and gathers context frames before it.
TEST(AvroEncoding, ADecodeErrorShowsItsContextAndItsPath) {
  const Schema record = Schema::parse(R"({"type": "record", "name": "r", "fields": [
      {"name": "a", "type": "int"}, {"name": "s", "type": "string"}]})");
  try {
    with_context("container block 3", [&] { decode(record, bytes_of({0x02, 0x01})); });
    FAIL() << "decoded an invalid datum";
  } catch (const DecodeError& error) {
    EXPECT_EQ(error.path(), "/fields/s");
    EXPECT_STREQ(error.what(), "container block 3: avro: negative length -1 at byte 1 of datum, at /fields/s");
    EXPECT_EQ(error.context(), std::vector<std::string>{"container block 3"});
  }
}

TEST(AvroEncoding, RejectsHugeCountsWithoutAllocating) {
  // 2^60 longs claimed by a 10-byte datum.
  std::string huge_count;
  Encoder(huge_count).write_long(std::int64_t{1} << 60);
  expect_decode_error(Schema::parse(R"({"type": "array", "items": "long"})"), huge_count,
                      "is larger than the data can hold");
  // Null items take no bytes, so their count is capped instead.
  expect_decode_error(Schema::parse(R"({"type": "array", "items": "null"})"), huge_count + '\0',
                      "is larger than the data can hold");
  // The cap holds for all arrays of a datum together: an array of arrays, each claiming the whole
  // cap in 4 bytes, must not multiply it (found by the fuzz target as an out-of-memory).
  const Schema nested = Schema::parse(R"({"type": "array", "items": {"type": "array", "items": "null"}})");
  std::string amplified;
  Encoder(amplified).write_long(64);
  for (int i = 0; i < 64; ++i) {
    Encoder(amplified).write_long(static_cast<std::int64_t>(kMaxEmptyItems));
    Encoder(amplified).write_long(0);
  }
  Encoder(amplified).write_long(0);
  expect_decode_error(nested, amplified, "more than 1048576 items that encode to no bytes in one input");
  Decoder skipping(amplified);
  EXPECT_THROW(skip(nested.root(), skipping), Error);
  std::string at_cap;  // exactly the cap, split over two arrays, still decodes
  Encoder(at_cap).write_long(2);
  for (int i = 0; i < 2; ++i) {
    Encoder(at_cap).write_long(static_cast<std::int64_t>(kMaxEmptyItems / 2));
    Encoder(at_cap).write_long(0);
  }
  Encoder(at_cap).write_long(0);
  EXPECT_EQ(decode(nested, at_cap).as<Array>().size(), 2u);
  std::string negative_size = bytes_of({0x01});
  Encoder(negative_size).write_long(1000);
  expect_decode_error(Schema::parse(R"({"type": "array", "items": "long"})"), negative_size,
                      "block byte size 1000 is negative or exceeds");
}

TEST(AvroEncoding, RejectsNestingBeyondTheLimit) {
  const Schema schema = Schema::parse(R"({"type": "record", "name": "List", "fields": [
      {"name": "next", "type": ["null", "List"]}]})");
  std::string deep;
  for (int i = 0; i < kMaxNestingDepth; ++i) deep.push_back('\x02');  // branch 1: another List
  deep.push_back('\x00');
  expect_decode_error(schema, deep, "data nests deeper than");
  Decoder decoder(deep);
  EXPECT_THROW(skip(schema.root(), decoder), Error);
  // Well within the limit decodes.
  EXPECT_NO_THROW(decode(schema, deep.substr(deep.size() - 20)));
}

}  // namespace
}  // namespace binberg::avro
