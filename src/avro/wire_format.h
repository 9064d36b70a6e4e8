#pragma once

// The Confluent Schema Registry wire format of Kafka messages: byte 0 is the magic byte 0x00,
// bytes 1-4 the schema id as a big-endian int32, then the Avro binary datum.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "avro/schema.h"
#include "avro/value.h"

namespace binberg::avro {

inline constexpr std::uint8_t kWireMagicByte = 0x00;
inline constexpr std::size_t kWireHeaderSize = 5;

struct WireMessage {
  std::int32_t schema_id = 0;
  std::string_view datum;  // a view into the message
};

// Throws Error for a wrong magic byte or a message shorter than the header.
WireMessage parse_wire_message(std::string_view message);
std::string wire_header(std::int32_t schema_id);
std::string encode_wire_message(std::int32_t schema_id, const Schema& schema, const Value& value);

// Returns the schema registered under an id, or nullopt when the id is unknown.
using SchemaLookup = std::function<std::optional<Schema>(std::int32_t schema_id)>;
// Decodes a message with its writer schema; throws Error for an unknown schema id or a bad datum.
Value decode_wire_message(std::string_view message, const SchemaLookup& lookup);

}  // namespace binberg::avro
