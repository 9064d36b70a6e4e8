// UTF-8 validation of Avro strings: the validator against the byte ranges of Unicode table 3-7, and
// the decoder, the resolver, the wire format and the encoder refusing invalid strings with an error
// that names the field path.

#include "avro/utf8.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "avro/encoding.h"
#include "avro/resolution.h"
#include "avro/wire_format.h"
#include "core/error.h"

namespace binberg::avro {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string bytes_of(std::initializer_list<int> bytes) {
  std::string out;
  for (const int byte : bytes) out.push_back(static_cast<char>(byte));
  return out;
}

struct Invalid {
  std::string text;
  std::size_t offset;
  std::string_view reason;
};

// Overlong encodings, surrogates, out-of-range code points, truncated sequences and stray bytes.
std::vector<Invalid> invalid_samples() {
  return {
      {bytes_of({0xc0, 0x80}), 0, "overlong encoding"},               // U+0000 as two bytes (Java's modified UTF-8)
      {bytes_of({0xc1, 0xbf}), 0, "overlong encoding"},               // U+007F as two bytes
      {"ab" + bytes_of({0xe0, 0x80, 0xaf}), 2, "overlong encoding"},  // '/' as three bytes
      {bytes_of({0xe0, 0x9f, 0xbf}), 0, "overlong encoding"},         // U+07FF as three bytes
      {bytes_of({0xf0, 0x80, 0x80, 0xaf}), 0, "overlong encoding"},   // '/' as four bytes
      {bytes_of({0xf0, 0x8f, 0xbf, 0xbf}), 0, "overlong encoding"},   // U+FFFF as four bytes
      {bytes_of({0xed, 0xa0, 0x80}), 0, "surrogate code point"},      // U+D800
      {bytes_of({0xed, 0xbf, 0xbf}), 0, "surrogate code point"},      // U+DFFF
      {"x" + bytes_of({0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80}), 1, "surrogate code point"},  // CESU-8 pair
      {bytes_of({0xf4, 0x90, 0x80, 0x80}), 0, "code point above U+10FFFF"},               // U+110000
      {bytes_of({0xf5, 0x80, 0x80, 0x80}), 0, "code point above U+10FFFF"},
      {bytes_of({0xf8, 0x88, 0x80, 0x80, 0x80}), 0, "invalid byte"},  // five-byte form
      {bytes_of({0xff}), 0, "invalid byte"},
      {bytes_of({0xc3}), 0, "truncated sequence"},                            // lead byte at the end
      {"abc" + bytes_of({0xe2, 0x82}), 3, "truncated sequence"},              // € without its last byte
      {bytes_of({0xf0, 0x9f, 0x98}), 0, "truncated sequence"},                // emoji cut short
      {bytes_of({0xe2, 0x82, 0x41}), 0, "truncated sequence"},                // ASCII where a continuation belongs
      {bytes_of({0xc3, 0xa9, 0xc3, 0x28}), 2, "truncated sequence"},          // é, then a broken é
      {bytes_of({0x80}), 0, "unexpected continuation byte"},                  // continuation without a lead
      {"0123456789" + bytes_of({0xbf}), 10, "unexpected continuation byte"},  // after the ASCII fast path
  };
}

TEST(AvroUtf8, AcceptsValidText) {
  for (const std::string& text : {
           std::string(), std::string("plain ASCII that is longer than one eight-byte word"),
           std::string("\0nul is a code point", 20),
           std::string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),  // é € 😀
           bytes_of({0xc2, 0x80}),                                    // U+0080, smallest two-byte
           bytes_of({0xdf, 0xbf}),                                    // U+07FF
           bytes_of({0xe0, 0xa0, 0x80}),                              // U+0800, smallest three-byte
           bytes_of({0xed, 0x9f, 0xbf}),                              // U+D7FF, below the surrogates
           bytes_of({0xee, 0x80, 0x80}),                              // U+E000, above them
           bytes_of({0xef, 0xbf, 0xbf}),                              // U+FFFF
           bytes_of({0xf0, 0x90, 0x80, 0x80}),                        // U+10000, smallest four-byte
           bytes_of({0xf4, 0x8f, 0xbf, 0xbf}),                        // U+10FFFF, the largest
       }) {
    EXPECT_TRUE(is_valid_utf8(text)) << printable_bytes(text);
  }
}

TEST(AvroUtf8, RejectsInvalidTextNamingTheOffsetAndReason) {
  for (const Invalid& sample : invalid_samples()) {
    const auto problem = find_invalid_utf8(sample.text);
    ASSERT_TRUE(problem) << printable_bytes(sample.text);
    EXPECT_EQ(problem->offset, sample.offset) << printable_bytes(sample.text);
    EXPECT_EQ(problem->reason, sample.reason) << printable_bytes(sample.text);
  }
}

// Every two-byte and three-byte sequence agrees with a reference decoder written from the definition.
TEST(AvroUtf8, AgreesWithTheDefinitionOnEveryShortSequence) {
  auto reference_valid = [](const std::string& text) {
    std::size_t i = 0;
    while (i < text.size()) {
      const auto lead = static_cast<unsigned char>(text[i]);
      const std::size_t length = lead < 0x80         ? 1
                                 : lead >> 5 == 0x6  ? 2
                                 : lead >> 4 == 0xe  ? 3
                                 : lead >> 3 == 0x1e ? 4
                                                     : 0;
      if (length == 0 || i + length > text.size()) return false;
      std::uint32_t code = length == 1 ? lead : lead & (0x7f >> length);
      for (std::size_t k = 1; k < length; ++k) {
        const auto byte = static_cast<unsigned char>(text[i + k]);
        if ((byte & 0xc0) != 0x80) return false;
        code = (code << 6) | (byte & 0x3f);
      }
      const std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
      if (code < smallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
      i += length;
    }
    return true;
  };
  for (int a = 0x80; a < 0x100; ++a) {
    for (int b = 0; b < 0x100; ++b) {
      const std::string two = bytes_of({a, b});
      ASSERT_EQ(is_valid_utf8(two), reference_valid(two)) << printable_bytes(two);
      for (const int c : {0x00, 0x7f, 0x80, 0x9f, 0xa0, 0xbf, 0xc0}) {
        const std::string three = bytes_of({a, b, c});
        ASSERT_EQ(is_valid_utf8(three), reference_valid(three)) << printable_bytes(three);
        const std::string four = three + "\x80";
        ASSERT_EQ(is_valid_utf8(four), reference_valid(four)) << printable_bytes(four);
      }
    }
  }
}

const Schema& row_schema() {
  static const Schema schema = Schema::parse(R"({"type": "record", "name": "Envelope", "fields": [
      {"name": "op", "type": "string"},
      {"name": "after", "type": ["null", {"type": "record", "name": "Row", "fields": [
          {"name": "id", "type": "long"},
          {"name": "tags", "type": {"type": "array", "items": "string"}},
          {"name": "attributes", "type": {"type": "map", "values": "string"}}]}]}]})");
  return schema;
}

// The datum of row_schema() with `bad` as the second tag.
std::string datum_with_tag(const std::string& bad) {
  std::string datum;
  Encoder encoder(datum);
  encoder.write_bytes("c");
  encoder.write_long(1);  // union branch Row
  encoder.write_long(7);
  encoder.write_long(2);  // one block of two tags
  encoder.write_bytes("fine");
  encoder.write_bytes(bad);
  encoder.write_long(0);
  encoder.write_long(0);  // no attributes
  return datum;
}

TEST(AvroUtf8, DecoderRejectsInvalidStringsNamingThePath) {
  for (const Invalid& sample : invalid_samples()) {
    const std::string datum = datum_with_tag(sample.text);
    try {
      decode(row_schema(), datum);
      ADD_FAILURE() << "decoded invalid UTF-8 " << printable_bytes(sample.text);
    } catch (const DecodeError& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr("invalid UTF-8"), HasSubstr(std::string(sample.reason)),
                                  HasSubstr("at /fields/after/1/fields/tags/1")));
      EXPECT_EQ(e.path(), "/fields/after/1/fields/tags/1");
    }
  }
  // The offset names the offending byte in the datum: the second tag's bytes start at byte 11.
  try {
    decode(row_schema(), datum_with_tag("ab" + bytes_of({0xe0, 0x80, 0xaf})));
    ADD_FAILURE() << "decoded an overlong encoding";
  } catch (const DecodeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("(overlong encoding at byte 2 of the string) at byte 13 of datum")) << e.what();
  }
  // Skipping does not look into strings: a reader that drops the field is not stopped by it.
  const std::string datum = datum_with_tag(bytes_of({0xff}));
  Decoder decoder(datum);
  EXPECT_NO_THROW(skip(row_schema().root(), decoder));
  EXPECT_EQ(decoder.remaining(), 0u);
}

TEST(AvroUtf8, DecoderRejectsInvalidMapKeysAndValues) {
  const Schema schema = Schema::parse(R"({"type": "map", "values": "string"})");
  std::string bad_key;
  Encoder(bad_key).write_long(1);
  Encoder(bad_key).write_bytes(bytes_of({0xed, 0xa0, 0x80}));
  Encoder(bad_key).write_bytes("v");
  Encoder(bad_key).write_long(0);
  EXPECT_THROW(
      {
        try {
          decode(schema, bad_key);
        } catch (const DecodeError& e) {
          EXPECT_THAT(e.what(), HasSubstr("surrogate code point"));
          EXPECT_EQ(e.path(), "") << "a bad key is reported at the map";
          throw;
        }
      },
      DecodeError);
  std::string bad_value;
  Encoder(bad_value).write_long(1);
  Encoder(bad_value).write_bytes("city");
  Encoder(bad_value).write_bytes(bytes_of({'Z', 0xc3}));
  Encoder(bad_value).write_long(0);
  try {
    decode(schema, bad_value);
    ADD_FAILURE() << "decoded a truncated sequence";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.path(), "/city") << e.what();
    EXPECT_THAT(e.what(), HasSubstr("truncated sequence"));
  }
}

TEST(AvroUtf8, ResolverValidatesStringsIncludingBytesPromotedToString) {
  const Schema writer = Schema::parse(R"({"type": "record", "name": "R", "fields": [
      {"name": "raw", "type": "bytes"}, {"name": "name", "type": "string"}, {"name": "dropped", "type": "string"}]})");
  const Schema reader = Schema::parse(R"({"type": "record", "name": "R", "fields": [
      {"name": "label", "aliases": ["name"], "type": "string"}, {"name": "raw", "type": "string"}]})");
  const Resolver resolver(writer, reader);
  auto datum = [](const std::string& raw, const std::string& name, const std::string& dropped) {
    std::string out;
    Encoder encoder(out);
    encoder.write_bytes(raw);
    encoder.write_bytes(name);
    encoder.write_bytes(dropped);
    return out;
  };
  EXPECT_EQ(resolver.read(datum("r", "n", bytes_of({0xff}))), Value(Record{{Value("n"), Value("r")}}))
      << "a dropped field's content is not validated";
  try {
    resolver.read(datum("r", bytes_of({0xc0, 0xaf}), ""));
    ADD_FAILURE() << "resolved an overlong encoding";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.path(), "/fields/label") << "paths name the reader's field";
    EXPECT_THAT(e.what(), HasSubstr("overlong encoding"));
  }
  try {
    resolver.read(datum(bytes_of({0xed, 0xb0, 0x80}), "n", ""));
    ADD_FAILURE() << "promoted invalid bytes to a string";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.path(), "/fields/raw");
    EXPECT_THAT(e.what(), HasSubstr("surrogate code point"));
  }
}

TEST(AvroUtf8, WireFormatAndContainerReadersRejectInvalidStrings) {
  const Schema schema =
      Schema::parse(R"({"type": "record", "name": "R", "fields": [{"name": "s", "type": "string"}]})");
  std::string message = wire_header(42);
  Encoder(message).write_bytes(bytes_of({0xf4, 0x90, 0x80, 0x80}));
  try {
    decode_wire_message(message, [&](std::int32_t) { return std::optional<Schema>(schema); });
    ADD_FAILURE() << "decoded a code point above U+10FFFF";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("code point above U+10FFFF"), HasSubstr("datum of schema id 42"),
                                HasSubstr("at /fields/s")));
  }
}

TEST(AvroUtf8, EncoderRefusesInvalidStringsNamingThePath) {
  for (const Invalid& sample : invalid_samples()) {
    const Value row(Record{
        {Value("c"), Value(Union(1, Value(Record{{Value(std::int64_t{1}), Value(Array{Value("ok"), Value(sample.text)}),
                                                  Value(Map{})}})))}});
    try {
      encode(row_schema(), row);
      ADD_FAILURE() << "encoded invalid UTF-8 " << printable_bytes(sample.text);
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr("not valid UTF-8"), HasSubstr(std::string(sample.reason)),
                                  HasSubstr("at /fields/after/1/fields/tags/1")));
    }
  }
  const Value bad_key(
      Record{{Value("c"),
              Value(Union(1, Value(Record{{Value(std::int64_t{1}), Value(Array{}),
                                           Value(Map{{"ok", Value("v")}, {bytes_of({'k', 0xc3}), Value("v")}})}})))}});
  try {
    encode(row_schema(), bad_key);
    ADD_FAILURE() << "encoded an invalid map key";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(R"(map key "k\xc3" is not valid UTF-8 (truncated sequence at byte 1))"),
                                HasSubstr("at /fields/after/1/fields/attributes")));
  }
  // Valid multi-byte text round-trips unchanged.
  const std::string text = "Z\xc3\xbcrich \xe2\x82\xac \xf0\x9f\x98\x80";
  const Value good(Record{{Value(text), Value(Union(0, Value()))}});
  EXPECT_EQ(decode(row_schema(), encode(row_schema(), good)), good);
}

TEST(AvroUtf8, PrintableBytesEscapesEverythingButPrintableAscii) {
  EXPECT_EQ(printable_bytes(bytes_of({'a', 0x00, 0xc3, '\\', '~'})), "a\\x00\\xc3\\x5c~");
}

}  // namespace
}  // namespace binberg::avro
