#pragma once

// Typed access to the members of Iceberg metadata JSON objects. Every error names the object being
// read (WHAT, e.g. "snapshot 42") and the member, so a bad metadata file can be fixed by hand.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace binberg::iceberg {

// Ordered so that written metadata lists members in the order the spec documents them.
using Json = nlohmann::ordered_json;

void require_object(const Json& json, std::string_view what);
const Json& required_member(const Json& object, std::string_view key, std::string_view what);
// A required member that is a list (e.g. the "fields" of a partition spec).
const Json& array_member(const Json& object, std::string_view key, std::string_view what);

std::int32_t int_member(const Json& object, std::string_view key, std::string_view what);
std::int64_t long_member(const Json& object, std::string_view key, std::string_view what);
bool bool_member(const Json& object, std::string_view key, std::string_view what);
std::string string_member(const Json& object, std::string_view key, std::string_view what);

// Absent and JSON null both read as "no value".
std::optional<std::int32_t> optional_int_member(const Json& object, std::string_view key, std::string_view what);
std::optional<std::int64_t> optional_long_member(const Json& object, std::string_view key, std::string_view what);
std::optional<std::string> optional_string_member(const Json& object, std::string_view key, std::string_view what);

std::int32_t as_int(const Json& value, std::string_view what);
std::int64_t as_long(const Json& value, std::string_view what);

// A JSON object whose values are all strings (table properties, snapshot summaries).
std::map<std::string, std::string> as_string_map(const Json& value, std::string_view what);
Json to_json(const std::map<std::string, std::string>& map);

}  // namespace binberg::iceberg
