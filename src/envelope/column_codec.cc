#include "envelope/column_codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "core/error.h"

namespace binberg::envelope {

namespace {

using Shape = ValueShape;  // the Avro shape of a column decides the schema and both value directions

avro::Json decimal_type(unsigned precision, unsigned scale) {
  return avro::Json{{"type", "bytes"}, {"logicalType", "decimal"}, {"precision", precision}, {"scale", scale}};
}

// Whether the signed/unsigned integer kinds a column may hold fit the Avro type.
std::int64_t signed_value(const Column& column, const Value& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return *i;
  if (const auto* u = std::get_if<std::uint64_t>(&value)) {
    if (*u > static_cast<std::uint64_t>(INT64_MAX)) fail("column {}: {} does not fit a long", column.name, *u);
    return static_cast<std::int64_t>(*u);
  }
  fail("column {}: a {} value is not an integer", column.name, to_display_string(value));
}

template <typename T>
const T& expect(const Column& column, const Value& value, const char* kind) {
  if (const T* held = std::get_if<T>(&value)) return *held;
  fail("column {} ({}): a {} value is not {}", column.name, to_string(column.type), to_display_string(value), kind);
}

avro::Bytes to_bytes(const std::string& data) { return avro::Bytes(data.begin(), data.end()); }
std::string from_bytes(const avro::Bytes& data) { return std::string(data.begin(), data.end()); }

// Integers decode to the kind the source reader gives the column: unsigned columns and BIT
// unsigned, the others signed.
Value integer_value(const Column& column, std::int64_t value) {
  if (column.is_unsigned || column.type == SourceType::kBit) {
    if (value < 0) fail("column {}: {} is negative in an unsigned column", column.name, value);
    return static_cast<std::uint64_t>(value);
  }
  return value;
}

// The value DATUM holds for COLUMN; errors name the value, from_avro adds the column.
Value value_from_avro(const Column& column, const avro::Value& datum) {
  switch (value_shape(column)) {
    case Shape::kInt:
      return integer_value(column, datum.as<std::int32_t>());
    case Shape::kLong:
      return integer_value(column, datum.as<std::int64_t>());
    case Shape::kWideUnsigned: {
      const std::string digits = decimal_from_bytes(datum.as<avro::Bytes>(), 0);
      if (digits.starts_with('-') || digits.size() > 20 || (digits.size() == 20 && digits > "18446744073709551615")) {
        fail("column {}: {} is not a 64-bit unsigned value", column.name, digits);
      }
      return static_cast<std::uint64_t>(std::stoull(digits));
    }
    case Shape::kFloat:
      return datum.as<float>();
    case Shape::kDouble:
      return datum.as<double>();
    case Shape::kDecimal:
      return Decimal{decimal_from_bytes(datum.as<avro::Bytes>(), column.scale)};
    case Shape::kDate:
      return Date{datum.as<std::int32_t>()};
    case Shape::kTime:
      return TimeOfDay{datum.as<std::int64_t>()};
    case Shape::kDateTime:
      return DateTime{datum.as<std::int64_t>()};
    case Shape::kTimestamp:
      return Timestamp{datum.as<std::int64_t>()};
    case Shape::kString:
      return Text{datum.as<std::string>()};
    case Shape::kBytes:
      return Bytes{from_bytes(datum.as<avro::Bytes>())};
  }
  fail("column {}: no value", column.name);
}

}  // namespace

avro::Json column_avro_type(const Column& column) {
  switch (value_shape(column)) {
    case Shape::kInt:
      return "int";
    case Shape::kLong:
      return "long";
    case Shape::kWideUnsigned:
      return decimal_type(20, 0);
    case Shape::kFloat:
      return "float";
    case Shape::kDouble:
      return "double";
    case Shape::kDecimal:
      return decimal_type(column.precision, column.scale);
    case Shape::kDate:
      return avro::Json{{"type", "int"}, {"logicalType", "date"}};
    case Shape::kTime:
      return avro::Json{{"type", "long"}, {"connect.name", "io.debezium.time.MicroTime"}};
    case Shape::kDateTime:
      return avro::Json{{"type", "long"}, {"logicalType", "local-timestamp-micros"}};
    case Shape::kTimestamp:
      return avro::Json{{"type", "long"}, {"logicalType", "timestamp-micros"}};
    case Shape::kString:
      return "string";
    case Shape::kBytes:
      return "bytes";
  }
  fail("column {}: no Avro type", column.name);
}

avro::Json column_description(const Column& column) {
  avro::Json description{{"name", column.name}, {"type", to_string(column.type)}, {"nullable", column.nullable}};
  if (column.is_unsigned) description["unsigned"] = true;
  if (column.precision != 0) description["precision"] = column.precision;
  if (column.scale != 0) description["scale"] = column.scale;
  if (column.max_bytes != 0) description["max_bytes"] = column.max_bytes;
  if (!column.charset.empty()) description["charset"] = column.charset;
  if (!column.symbols.empty()) description["symbols"] = column.symbols;
  return description;
}

Column column_from_description(const avro::Json& description, std::string_view where) {
  if (!description.is_object() || !description.contains("name") || !description["name"].is_string() ||
      !description.contains("type") || !description["type"].is_string()) {
    fail("{}: the binberg.column description needs a name and a type", where);
  }
  Column column;
  column.name = description["name"].get<std::string>();
  const std::string type = description["type"].get<std::string>();
  bool known = false;
  for (int t = 0; t <= static_cast<int>(SourceType::kGeometry); ++t) {
    if (type == to_string(static_cast<SourceType>(t))) {
      column.type = static_cast<SourceType>(t);
      known = true;
    }
  }
  if (!known) fail("{}: column {} has an unknown source type {}", where, column.name, type);
  try {
    column.nullable = description.value("nullable", true);
    column.is_unsigned = description.value("unsigned", false);
    column.precision = description.value("precision", 0u);
    column.scale = description.value("scale", 0u);
    column.max_bytes = description.value("max_bytes", 0u);
    column.charset = description.value("charset", std::string());
    column.symbols = description.value("symbols", std::vector<std::string>());
  } catch (const avro::Json::exception& error) {
    fail("{}: column {}: {}", where, column.name, error.what());
  }
  return column;
}

std::string avro_field_name(std::string_view column_name) {
  std::string name;
  for (const char c : column_name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    name.push_back(keep ? c : '_');
  }
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) name.insert(name.begin(), '_');
  return name;
}

avro::Value to_avro(const Column& column, const Value& value) {
  switch (value_shape(column)) {
    case Shape::kInt: {
      const std::int64_t v = signed_value(column, value);
      if (v < INT32_MIN || v > INT32_MAX) fail("column {}: {} does not fit an int", column.name, v);
      return static_cast<std::int32_t>(v);
    }
    case Shape::kLong:
      return signed_value(column, value);
    case Shape::kWideUnsigned:
      return decimal_to_bytes(std::to_string(expect<std::uint64_t>(column, value, "unsigned")));
    case Shape::kFloat:
      return expect<float>(column, value, "a float");
    case Shape::kDouble:
      return expect<double>(column, value, "a double");
    case Shape::kDecimal:
      return decimal_to_bytes(expect<Decimal>(column, value, "a decimal").digits);
    case Shape::kDate:
      return expect<Date>(column, value, "a date").days;
    case Shape::kTime:
      return expect<TimeOfDay>(column, value, "a time").micros;
    case Shape::kDateTime:
      return expect<DateTime>(column, value, "a datetime").micros;
    case Shape::kTimestamp:
      return expect<Timestamp>(column, value, "a timestamp").micros;
    case Shape::kString:
      return expect<Text>(column, value, "text").utf8;
    case Shape::kBytes:
      return to_bytes(expect<Bytes>(column, value, "bytes").data);
  }
  fail("column {}: no Avro value", column.name);
}

Value from_avro(const Column& column, const avro::Value& datum) {
  // The frame is made only on failure: this runs for every value decoded.
  return with_context([&] { return fmt::format("column {} ({})", column.name, to_string(column.type)); },
                      [&] { return value_from_avro(column, datum); });
}

avro::Bytes decimal_to_bytes(std::string_view digits) {
  const bool negative = digits.starts_with('-');
  // Decimal digits of the unscaled magnitude, most significant first.
  std::vector<std::uint8_t> decimal;
  for (const char c : digits.substr(negative ? 1 : 0)) {
    if (c == '.') continue;
    if (c < '0' || c > '9') fail("decimal {}: not a decimal number", digits);
    decimal.push_back(static_cast<std::uint8_t>(c - '0'));
  }
  // Repeated division by 256 gives the magnitude's bytes, least significant first.
  avro::Bytes magnitude;
  while (std::any_of(decimal.begin(), decimal.end(), [](std::uint8_t d) { return d != 0; })) {
    unsigned remainder = 0;
    for (std::uint8_t& d : decimal) {
      const unsigned current = remainder * 10 + d;
      d = static_cast<std::uint8_t>(current / 256);
      remainder = current % 256;
    }
    magnitude.push_back(static_cast<std::uint8_t>(remainder));
  }
  magnitude.push_back(0);  // room for the sign bit
  if (negative) {
    unsigned carry = 1;
    for (std::uint8_t& byte : magnitude) {
      const unsigned sum = static_cast<std::uint8_t>(~byte) + carry;
      byte = static_cast<std::uint8_t>(sum);
      carry = sum >> 8;
    }
  }
  std::reverse(magnitude.begin(), magnitude.end());
  // As few bytes as keep the value and its sign.
  std::size_t first = 0;
  while (first + 1 < magnitude.size() && ((magnitude[first] == 0x00 && (magnitude[first + 1] & 0x80) == 0) ||
                                          (magnitude[first] == 0xff && (magnitude[first + 1] & 0x80) != 0))) {
    ++first;
  }
  return avro::Bytes(magnitude.begin() + static_cast<std::ptrdiff_t>(first), magnitude.end());
}

std::string decimal_from_bytes(const avro::Bytes& bytes, unsigned scale) {
  const bool negative = !bytes.empty() && (bytes.front() & 0x80) != 0;
  avro::Bytes magnitude = bytes;
  if (negative) {  // two's complement: invert and add one, from the least significant byte
    unsigned carry = 1;
    for (auto it = magnitude.rbegin(); it != magnitude.rend(); ++it) {
      const unsigned sum = static_cast<std::uint8_t>(~*it) + carry;
      *it = static_cast<std::uint8_t>(sum);
      carry = sum >> 8;
    }
  }
  // Decimal digits, least significant first: digits = digits * 256 + byte for each byte.
  std::vector<std::uint8_t> decimal;
  for (const std::uint8_t byte : magnitude) {
    unsigned carry = byte;
    for (std::uint8_t& d : decimal) {
      const unsigned current = d * 256u + carry;
      d = static_cast<std::uint8_t>(current % 10);
      carry = current / 10;
    }
    for (; carry != 0; carry /= 10) decimal.push_back(static_cast<std::uint8_t>(carry % 10));
  }
  while (decimal.size() < scale + 1) decimal.push_back(0);
  const bool zero = std::all_of(decimal.begin(), decimal.end(), [](std::uint8_t d) { return d == 0; });
  std::string text;
  for (auto it = decimal.rbegin(); it != decimal.rend(); ++it) text.push_back(static_cast<char>('0' + *it));
  std::string integer = text.substr(0, text.size() - scale);
  const auto first_digit = integer.find_first_not_of('0');
  integer = first_digit == std::string::npos ? "0" : integer.substr(first_digit);
  std::string out = negative && !zero ? "-" + integer : integer;
  if (scale > 0) out += "." + text.substr(text.size() - scale);
  return out;
}

}  // namespace binberg::envelope
