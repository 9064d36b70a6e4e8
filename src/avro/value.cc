#include "avro/value.h"

#include <array>
#include <limits>
#include <type_traits>
#include <variant>

#include "core/error.h"

namespace binberg::avro {

std::string_view Value::kind_name(std::size_t index) {
  static constexpr std::array<std::string_view, std::variant_size_v<Data>> kNames = {
      "null",  "boolean", "int",   "long", "float",  "double", "string",
      "bytes", "enum",    "array", "map",  "record", "union"};
  return kNames.at(index);
}

void Value::throw_wrong_kind(std::size_t wanted_index) const {
  fail("avro value: expected {} but the value is {}", kind_name(wanted_index), kind());
}

namespace {

[[noreturn]] void default_error(const Node& schema, const Json& json) {
  fail("{} is not a valid {}", json.dump(), schema.describe());
}

Bytes bytes_from_json(const Node& schema, const Json& json) {
  if (!json.is_string()) default_error(schema, json);
  // JSON encodes each byte as the code point of the same value, i.e. U+0000..U+00FF written as UTF-8.
  const auto& text = json.get_ref<const std::string&>();
  Bytes bytes;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto lead = static_cast<std::uint8_t>(text[i]);
    if (lead < 0x80) {
      bytes.push_back(lead);
    } else if ((lead == 0xc2 || lead == 0xc3) && i + 1 < text.size()) {
      bytes.push_back(static_cast<std::uint8_t>(((lead & 0x03) << 6) | (static_cast<std::uint8_t>(text[++i]) & 0x3f)));
    } else {
      fail("{} has a code point above U+00FF, which is not a byte", json.dump());
    }
  }
  return bytes;
}

template <typename Int>
Int integer_from_json(const Node& schema, const Json& json) {
  if (!json.is_number_integer()) default_error(schema, json);
  if (json.is_number_unsigned()) {
    const auto value = json.get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) default_error(schema, json);
    return static_cast<Int>(value);
  }
  const auto value = json.get<std::int64_t>();
  if (value < std::numeric_limits<Int>::min() || value > std::numeric_limits<Int>::max()) default_error(schema, json);
  return static_cast<Int>(value);
}

// Record fields missing from a default take their own defaults, which a recursive schema could repeat forever.
constexpr int kMaxDefaultDepth = 64;

Value from_json(const Node& schema, const Json& json, int depth) {
  if (depth > kMaxDefaultDepth) fail("default nests deeper than {} levels in {}", kMaxDefaultDepth, schema.describe());
  switch (schema.type) {
    case Type::kNull:
      if (!json.is_null()) default_error(schema, json);
      return Value();
    case Type::kBoolean:
      if (!json.is_boolean()) default_error(schema, json);
      return json.get<bool>();
    case Type::kInt:
      return integer_from_json<std::int32_t>(schema, json);
    case Type::kLong:
      return integer_from_json<std::int64_t>(schema, json);
    case Type::kFloat:
      if (!json.is_number()) default_error(schema, json);
      return json.get<float>();
    case Type::kDouble:
      if (!json.is_number()) default_error(schema, json);
      return json.get<double>();
    case Type::kString:
      if (!json.is_string()) default_error(schema, json);
      return json.get<std::string>();
    case Type::kBytes:
      return bytes_from_json(schema, json);
    case Type::kFixed: {
      Bytes bytes = bytes_from_json(schema, json);
      if (bytes.size() != schema.fixed_size) default_error(schema, json);
      return bytes;
    }
    case Type::kEnum: {
      const auto index = json.is_string() ? schema.symbol_index(json.get_ref<const std::string&>()) : std::nullopt;
      if (!index) default_error(schema, json);
      return Enum{*index};
    }
    case Type::kArray: {
      if (!json.is_array()) default_error(schema, json);
      Array items;
      for (const Json& item : json) items.push_back(from_json(*schema.items, item, depth + 1));
      return items;
    }
    case Type::kMap: {
      if (!json.is_object()) default_error(schema, json);
      Map entries;
      for (const auto& [key, item] : json.items()) entries.emplace(key, from_json(*schema.items, item, depth + 1));
      return entries;
    }
    case Type::kRecord: {
      if (!json.is_object()) default_error(schema, json);
      Record record;
      for (const Field& field : schema.fields) {
        const auto it = json.find(field.name);
        if (it != json.end()) {
          record.fields.push_back(from_json(*field.type, *it, depth + 1));
        } else if (field.default_value) {
          record.fields.push_back(from_json(*field.type, *field.default_value, depth + 1));
        } else {
          fail("{} has no value for field '{}' of {}", json.dump(), field.name, schema.describe());
        }
      }
      return record;
    }
    case Type::kUnion:
      if (schema.branches.empty()) default_error(schema, json);
      return Union(0, from_json(*schema.branches.front(), json, depth + 1));
  }
  default_error(schema, json);
}

}  // namespace

Value value_from_json(const Node& schema, const Json& json) { return from_json(schema, json, 0); }

Json default_json(const Value& value) {
  return std::visit(
      [&](const auto& held) -> Json {
        using T = std::decay_t<decltype(held)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int32_t> ||
                             std::is_same_v<T, std::int64_t> || std::is_same_v<T, float> || std::is_same_v<T, double> ||
                             std::is_same_v<T, std::string>) {
          return held;
        } else if constexpr (std::is_same_v<T, Bytes>) {
          std::string text;  // each byte as the code point of its value, in UTF-8
          for (const std::uint8_t byte : held) {
            if (byte < 0x80) {
              text += static_cast<char>(byte);
            } else {
              text += static_cast<char>(0xC0 | (byte >> 6));
              text += static_cast<char>(0x80 | (byte & 0x3F));
            }
          }
          return text;
        } else {
          fail("a {} value cannot be written as a default here", value.kind());
        }
      },
      value.data());
}

}  // namespace binberg::avro
