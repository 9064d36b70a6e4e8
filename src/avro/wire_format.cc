#include "avro/wire_format.h"

#include "avro/encoding.h"
#include "core/error.h"

namespace binberg::avro {

WireMessage parse_wire_message(std::string_view message) {
  if (message.size() < kWireHeaderSize) {
    fail("avro wire format: message of {} bytes is shorter than the {}-byte header", message.size(), kWireHeaderSize);
  }
  if (const auto magic = static_cast<std::uint8_t>(message[0]); magic != kWireMagicByte) {
    fail("avro wire format: magic byte is 0x{:02x}, expected 0x{:02x}", magic, kWireMagicByte);
  }
  std::uint32_t id = 0;
  for (std::size_t i = 1; i < kWireHeaderSize; ++i) id = (id << 8) | static_cast<std::uint8_t>(message[i]);
  return {static_cast<std::int32_t>(id), message.substr(kWireHeaderSize)};
}

std::string wire_header(std::int32_t schema_id) {
  const auto id = static_cast<std::uint32_t>(schema_id);
  std::string header(1, static_cast<char>(kWireMagicByte));
  for (int shift = 24; shift >= 0; shift -= 8) header.push_back(static_cast<char>((id >> shift) & 0xff));
  return header;
}

std::string encode_wire_message(std::int32_t schema_id, const Schema& schema, const Value& value) {
  std::string message = wire_header(schema_id);
  Encoder encoder(message);
  encode(schema.root(), value, encoder);
  return message;
}

Value decode_wire_message(std::string_view message, const SchemaLookup& lookup) {
  const WireMessage parsed = parse_wire_message(message);
  const std::optional<Schema> schema = lookup(parsed.schema_id);
  if (!schema) fail("avro wire format: unknown schema id {}", parsed.schema_id);
  Decoder decoder(parsed.datum, fmt::format("datum of schema id {}", parsed.schema_id), kWireHeaderSize);
  Value value = decode(schema->root(), decoder);
  decoder.expect_end();
  return value;
}

}  // namespace binberg::avro
