#pragma once

// Typed column values as binberg carries them from the source to the table. Each kind keeps the
// source's exact value: BIGINT UNSIGNED stays unsigned, DECIMAL stays an exact decimal string,
// text is UTF-8, temporal values are integers in microseconds or days.

#include <compare>
#include <cstdint>
#include <string>
#include <variant>

namespace binberg {

struct Decimal {
  std::string digits;  // canonical: optional '-', integer digits without leading zeros, '.' + exactly `scale` digits
  auto operator<=>(const Decimal&) const = default;
};
struct Text {
  std::string utf8;
  auto operator<=>(const Text&) const = default;
};
struct Bytes {
  std::string data;
  auto operator<=>(const Bytes&) const = default;
};
struct Date {
  std::int32_t days = 0;  // since 1970-01-01
  auto operator<=>(const Date&) const = default;
};
struct TimeOfDay {
  std::int64_t micros = 0;  // MySQL TIME: a signed duration, -838:59:59 .. 838:59:59
  auto operator<=>(const TimeOfDay&) const = default;
};
struct DateTime {
  std::int64_t micros = 0;  // since 1970-01-01 00:00:00, no time zone (MySQL DATETIME)
  auto operator<=>(const DateTime&) const = default;
};
struct Timestamp {
  std::int64_t micros = 0;  // since the epoch, UTC (MySQL TIMESTAMP)
  auto operator<=>(const Timestamp&) const = default;
};

// The index of each alternative is part of the canonical encoding: append new kinds at the end.
using Value = std::variant<std::monostate, std::int64_t, std::uint64_t, float, double, Decimal, Text, Bytes, Date,
                           TimeOfDay, DateTime, Timestamp>;

inline bool is_null(const Value& value) { return std::holds_alternative<std::monostate>(value); }

// Human-readable rendering for messages and `binberg` output (not for hashing).
std::string to_display_string(const Value& value);

// Days since 1970-01-01 of a proleptic Gregorian date, and back.
std::int32_t days_from_civil(std::int32_t year, unsigned month, unsigned day);
void civil_from_days(std::int32_t days, std::int32_t& year, unsigned& month, unsigned& day);

}  // namespace binberg
