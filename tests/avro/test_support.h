#pragma once

// Helpers shared by the avro tests: running the fastavro reference and comparing values as plain JSON.

#include <filesystem>
#include <string>

#include "avro/schema.h"
#include "avro/value.h"

namespace binberg::avro::testing {

// Runs tests/avro/fastavro_tool.py with the venv's python; returns its stdout, throws Error when it fails.
std::string run_fastavro_tool(const std::string& arguments);

// The fastavro_tool.py "plain JSON" of a value: records as objects, unions as their branch's value,
// enums as symbols, bytes and fixed as "hex:<hex>".
nlohmann::json to_plain(const Node& schema, const Value& value);

void write_text(const std::filesystem::path& path, const std::string& text);

// Hex digits of bytes, lowercase.
std::string hex(std::string_view bytes);

}  // namespace binberg::avro::testing
