#include "core/value.h"

#include <fmt/format.h>

#include <cstdlib>

namespace binberg {

// Howard Hinnant's civil-calendar algorithms (public domain), valid for the whole int32 range.
std::int32_t days_from_civil(std::int32_t year, unsigned month, unsigned day) {
  year -= month <= 2;
  const std::int32_t era = (year >= 0 ? year : year - 399) / 400;
  const unsigned year_of_era = static_cast<unsigned>(year - era * 400);
  const unsigned day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + static_cast<std::int32_t>(day_of_era) - 719468;
}

void civil_from_days(std::int32_t days, std::int32_t& year, unsigned& month, unsigned& day) {
  days += 719468;
  const std::int32_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned day_of_era = static_cast<unsigned>(days - era * 146097);
  const unsigned year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const unsigned day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const unsigned mp = (5 * day_of_year + 2) / 153;
  day = day_of_year - (153 * mp + 2) / 5 + 1;
  month = mp < 10 ? mp + 3 : mp - 9;
  year = static_cast<std::int32_t>(year_of_era) + era * 400 + (month <= 2);
}

namespace {

std::string format_date(std::int32_t days) {
  std::int32_t year = 0;
  unsigned month = 0, day = 0;
  civil_from_days(days, year, month, day);
  return fmt::format("{:04}-{:02}-{:02}", year, month, day);
}

std::string format_micros_of_day(std::int64_t micros) {
  const std::int64_t seconds = micros / 1000000;
  std::string out = fmt::format("{:02}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60);
  if (micros % 1000000 != 0) out += fmt::format(".{:06}", micros % 1000000);
  return out;
}

std::string format_date_time(std::int64_t micros) {
  constexpr std::int64_t kDay = 86400LL * 1000000;
  std::int64_t days = micros / kDay;
  std::int64_t rest = micros % kDay;
  if (rest < 0) {
    rest += kDay;
    --days;
  }
  return format_date(static_cast<std::int32_t>(days)) + " " + format_micros_of_day(rest);
}

struct Display {
  std::string operator()(std::monostate) const { return "NULL"; }
  std::string operator()(std::int64_t v) const { return std::to_string(v); }
  std::string operator()(std::uint64_t v) const { return std::to_string(v); }
  std::string operator()(float v) const { return fmt::format("{}", v); }
  std::string operator()(double v) const { return fmt::format("{}", v); }
  std::string operator()(const Decimal& v) const { return v.digits; }
  std::string operator()(const Text& v) const { return v.utf8; }
  std::string operator()(const Bytes& v) const {
    std::string out = "0x";
    for (unsigned char c : v.data) out += fmt::format("{:02x}", c);
    return out;
  }
  std::string operator()(const Date& v) const { return format_date(v.days); }
  std::string operator()(const TimeOfDay& v) const {
    return (v.micros < 0 ? "-" : "") + format_micros_of_day(std::llabs(v.micros));
  }
  std::string operator()(const DateTime& v) const { return format_date_time(v.micros); }
  std::string operator()(const Timestamp& v) const { return format_date_time(v.micros) + " UTC"; }
};

}  // namespace

std::string to_display_string(const Value& value) { return std::visit(Display{}, value); }

}  // namespace binberg
