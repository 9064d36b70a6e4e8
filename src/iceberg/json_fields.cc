#include "iceberg/detail/json_fields.h"

#include <limits>

#include "core/error.h"

namespace binberg::iceberg {

void require_object(const Json& json, std::string_view what) {
  if (!json.is_object()) fail("{} must be a JSON object, got {}", what, json.dump());
}

const Json& required_member(const Json& object, std::string_view key, std::string_view what) {
  require_object(object, what);
  const auto it = object.find(key);
  if (it == object.end()) fail("{} is missing required field \"{}\"", what, key);
  return *it;
}

const Json& array_member(const Json& object, std::string_view key, std::string_view what) {
  const Json& value = required_member(object, key, what);
  if (!value.is_array()) fail("{} \"{}\" must be a list, got {}", what, key, value.dump());
  return value;
}

std::int64_t as_long(const Json& value, std::string_view what) {
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail("{} is out of the long range: {}", what, value.dump());
    }
    return static_cast<std::int64_t>(value.get<std::uint64_t>());
  }
  if (!value.is_number_integer()) fail("{} must be an integer, got {}", what, value.dump());
  return value.get<std::int64_t>();
}

std::int32_t as_int(const Json& value, std::string_view what) {
  const std::int64_t number = as_long(value, what);
  if (number < std::numeric_limits<std::int32_t>::min() || number > std::numeric_limits<std::int32_t>::max()) {
    fail("{} is out of the int range: {}", what, number);
  }
  return static_cast<std::int32_t>(number);
}

std::int32_t int_member(const Json& object, std::string_view key, std::string_view what) {
  return as_int(required_member(object, key, what), fmt::format("{} \"{}\"", what, key));
}

std::int64_t long_member(const Json& object, std::string_view key, std::string_view what) {
  return as_long(required_member(object, key, what), fmt::format("{} \"{}\"", what, key));
}

bool bool_member(const Json& object, std::string_view key, std::string_view what) {
  const Json& value = required_member(object, key, what);
  if (!value.is_boolean()) fail("{} \"{}\" must be a boolean, got {}", what, key, value.dump());
  return value.get<bool>();
}

std::string string_member(const Json& object, std::string_view key, std::string_view what) {
  const Json& value = required_member(object, key, what);
  if (!value.is_string()) fail("{} \"{}\" must be a string, got {}", what, key, value.dump());
  return value.get<std::string>();
}

namespace {

const Json* present_member(const Json& object, std::string_view key, std::string_view what) {
  require_object(object, what);
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

std::optional<std::int32_t> optional_int_member(const Json& object, std::string_view key, std::string_view what) {
  if (present_member(object, key, what) == nullptr) return std::nullopt;
  return int_member(object, key, what);
}

std::optional<std::int64_t> optional_long_member(const Json& object, std::string_view key, std::string_view what) {
  if (present_member(object, key, what) == nullptr) return std::nullopt;
  return long_member(object, key, what);
}

std::optional<std::string> optional_string_member(const Json& object, std::string_view key, std::string_view what) {
  if (present_member(object, key, what) == nullptr) return std::nullopt;
  return string_member(object, key, what);
}

std::map<std::string, std::string> as_string_map(const Json& value, std::string_view what) {
  require_object(value, what);
  std::map<std::string, std::string> map;
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) fail("{} value of \"{}\" must be a string, got {}", what, key, item.dump());
    map.emplace(key, item.get<std::string>());
  }
  return map;
}

Json to_json(const std::map<std::string, std::string>& map) {
  Json object = Json::object();
  for (const auto& [key, value] : map) object[key] = value;
  return object;
}

}  // namespace binberg::iceberg
