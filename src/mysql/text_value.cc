#include "mysql/text_value.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/error.h"

namespace binberg::mysql {
namespace {

constexpr std::int64_t kMicrosPerSecond = 1000000;

template <typename T>
T parse_number(std::string_view text, const Column& column) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    fail("column {} ({}): '{}' is not a valid number", column.name, to_string(column.type), text);
  }
  return value;
}

double parse_double(std::string_view text, const Column& column) {
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size())
    fail("column {}: '{}' is not a valid floating-point number", column.name, text);
  return value;
}

// "[.ffffff]" after seconds, as microseconds.
std::int64_t parse_fraction(std::string_view text, const Column& column) {
  if (text.empty()) return 0;
  if (text[0] != '.' || text.size() > 7) fail("column {}: bad fractional seconds '{}'", column.name, text);
  std::string digits(text.substr(1));
  digits.resize(6, '0');
  return parse_number<std::int64_t>(digits, column);
}

std::int32_t parse_date_days(std::string_view text, const Column& column) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') fail("column {}: bad date '{}'", column.name, text);
  const auto year = parse_number<std::int32_t>(text.substr(0, 4), column);
  const auto month = parse_number<unsigned>(text.substr(5, 2), column);
  const auto day = parse_number<unsigned>(text.substr(8, 2), column);
  if (month < 1 || month > 12 || day < 1 || day > 31) {
    fail("column {}: date '{}' cannot be represented (zero dates are not supported)", column.name, text);
  }
  return days_from_civil(year, month, day);
}

std::int64_t parse_datetime_micros(std::string_view text, const Column& column) {
  if (text.size() < 19 || text[10] != ' ') fail("column {}: bad datetime '{}'", column.name, text);
  const std::int64_t days = parse_date_days(text.substr(0, 10), column);
  const auto hours = parse_number<std::int64_t>(text.substr(11, 2), column);
  const auto minutes = parse_number<std::int64_t>(text.substr(14, 2), column);
  const auto seconds = parse_number<std::int64_t>(text.substr(17, 2), column);
  return ((days * 24 + hours) * 60 + minutes) * 60 * kMicrosPerSecond + seconds * kMicrosPerSecond +
         parse_fraction(text.substr(19), column);
}

std::int64_t parse_time_micros(std::string_view text, const Column& column) {
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  const auto first = text.find(':');
  const auto second = first == std::string_view::npos ? first : text.find(':', first + 1);
  if (second == std::string_view::npos) fail("column {}: bad time '{}'", column.name, text);
  const auto hours = parse_number<std::int64_t>(text.substr(0, first), column);
  const auto minutes = parse_number<std::int64_t>(text.substr(first + 1, second - first - 1), column);
  const auto seconds = parse_number<std::int64_t>(text.substr(second + 1, 2), column);
  const std::int64_t micros =
      (hours * 3600 + minutes * 60 + seconds) * kMicrosPerSecond + parse_fraction(text.substr(second + 3), column);
  return negative ? -micros : micros;
}

}  // namespace

std::string quote_identifier(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

std::string select_expression(const Column& column) {
  const std::string name = quote_identifier(column.name);
  switch (column.type) {
    case SourceType::kFloat:
      return "CAST(" + name + " AS DOUBLE)";  // FLOAT's own text keeps only 6 digits
    case SourceType::kBit:
      return name + " + 0";
    default:
      return name;
  }
}

std::string select_list(const TableSchema& schema) {
  std::string list;
  for (const Column& column : schema.columns) list += (list.empty() ? "" : ", ") + select_expression(column);
  return list;
}

Value parse_text_value(const Column& column, const std::optional<std::string>& text) {
  if (!text) return std::monostate{};
  const std::string_view value = *text;
  switch (value_shape(column)) {
    case ValueShape::kInt:
    case ValueShape::kLong:
    case ValueShape::kWideUnsigned:
      // BIT and unsigned integers read as unsigned, YEAR and signed integers as signed.
      if (column.is_unsigned || column.type == SourceType::kBit) return parse_number<std::uint64_t>(value, column);
      return parse_number<std::int64_t>(value, column);
    case ValueShape::kFloat:
      return static_cast<float>(parse_double(value, column));
    case ValueShape::kDouble:
      return parse_double(value, column);
    case ValueShape::kDecimal: {
      std::string digits(value);
      if (digits.find_first_not_of("-0.") == std::string::npos && digits[0] == '-') digits.erase(0, 1);
      return Decimal{digits};
    }
    case ValueShape::kDate:
      return Date{parse_date_days(value, column)};
    case ValueShape::kTime:
      return TimeOfDay{parse_time_micros(value, column)};
    case ValueShape::kDateTime:
      return DateTime{parse_datetime_micros(value, column)};
    case ValueShape::kTimestamp:
      return Timestamp{parse_datetime_micros(value, column)};
    case ValueShape::kString:
      return Text{std::string(value)};
    case ValueShape::kBytes:
      return Bytes{std::string(value)};
  }
  fail("column {}: type {} has no text form", column.name, to_string(column.type));
}

}  // namespace binberg::mysql
