#include "iceberg/transform.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/error.h"
#include "iceberg/detail/text_parsing.h"
#include "iceberg/hash.h"

namespace binberg::iceberg {
namespace {

constexpr std::int64_t kMicrosPerHour = 3'600'000'000;
constexpr std::int64_t kMicrosPerDay = 24 * kMicrosPerHour;

// Floor division: time transforms count whole units before 1970 as negative (-1 is 1969).
std::int64_t floor_div(std::int64_t value, std::int64_t divisor) {
  const std::int64_t quotient = value / divisor;
  return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient;
}

template <typename Wide>
Wide truncate_number(Wide value, Wide width) {
  return value - (((value % width) + width) % width);
}

template <typename Narrow, typename Wide>
Narrow narrowed(Wide value, const Transform& transform, const Type& source) {
  if (value < std::numeric_limits<Narrow>::min() || value > std::numeric_limits<Narrow>::max()) {
    fail("{} of a {} value overflows the result type", transform.to_string(), source.to_string());
  }
  return static_cast<Narrow>(value);
}

// The first LENGTH code points, so the result stays valid UTF-8.
std::string truncate_utf8(const std::string& text, std::int32_t length) {
  std::int32_t code_points = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts_code_point = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_code_point && code_points++ == length) return text.substr(0, i);
  }
  return text;
}

bool is_date_or_timestamp(TypeKind kind) {
  return kind == TypeKind::kDate || kind == TypeKind::kTimestamp || kind == TypeKind::kTimestamptz;
}

bool is_timestamp(TypeKind kind) { return kind == TypeKind::kTimestamp || kind == TypeKind::kTimestamptz; }

std::int64_t days_from_epoch(const Type& source, const Literal& value) {
  return source.kind() == TypeKind::kDate ? std::get<std::int32_t>(value)
                                          : floor_div(std::get<std::int64_t>(value), kMicrosPerDay);
}

struct YearMonth {
  std::int64_t year;
  std::int64_t month;  // 1..12
};

// Proleptic Gregorian year and month of a day count from 1970-01-01, exact over the whole int64
// range (std::chrono's calendar covers only years -32767..32767). The algorithm counts from
// 0000-03-01 in 400-year eras, so leap days fall at the end of each counted year.
YearMonth civil_year_month(std::int64_t days) {
  const std::int64_t shifted = days + 719468;  // days from 0000-03-01
  const std::int64_t era = floor_div(shifted, 146097);
  const std::int64_t day_of_era = shifted - era * 146097;
  const std::int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const std::int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const std::int64_t march_based_month = (5 * day_of_year + 2) / 153;
  const std::int64_t month = march_based_month < 10 ? march_based_month + 3 : march_based_month - 9;
  return {year_of_era + era * 400 + (month <= 2 ? 1 : 0), month};
}

}  // namespace

Transform Transform::bucket(std::int32_t buckets) {
  if (buckets <= 0) fail("bucket[N] needs a positive number of buckets, got {}", buckets);
  return Transform(Kind::kBucket, buckets);
}

Transform Transform::truncate(std::int32_t width) {
  if (width <= 0) fail("truncate[W] needs a positive width, got {}", width);
  return Transform(Kind::kTruncate, width);
}

Transform Transform::parse(std::string_view text) {
  static const std::pair<const char*, Kind> kPlain[] = {{"identity", Kind::kIdentity}, {"year", Kind::kYear},
                                                        {"month", Kind::kMonth},       {"day", Kind::kDay},
                                                        {"hour", Kind::kHour},         {"void", Kind::kVoid}};
  for (const auto& [name, kind] : kPlain) {
    if (text == name) return Transform(kind);
  }
  const bool is_bucket = text.starts_with("bucket[");
  const auto inner = is_bucket ? enclosed(text, "bucket[", ']') : enclosed(text, "truncate[", ']');
  if (!inner) return Transform(Kind::kUnknown, 0, std::string(text));
  const auto parameter = parse_integer(*inner);
  if (!parameter || *parameter < std::numeric_limits<std::int32_t>::min() ||
      *parameter > std::numeric_limits<std::int32_t>::max()) {
    fail("transform \"{}\": parameter is not an int", text);
  }
  return with_context(fmt::format("transform \"{}\"", text), [&] {
    return is_bucket ? bucket(static_cast<std::int32_t>(*parameter)) : truncate(static_cast<std::int32_t>(*parameter));
  });
}

std::string Transform::to_string() const {
  switch (kind_) {
    case Kind::kIdentity:
      return "identity";
    case Kind::kBucket:
      return "bucket[" + std::to_string(parameter_) + "]";
    case Kind::kTruncate:
      return "truncate[" + std::to_string(parameter_) + "]";
    case Kind::kYear:
      return "year";
    case Kind::kMonth:
      return "month";
    case Kind::kDay:
      return "day";
    case Kind::kHour:
      return "hour";
    case Kind::kVoid:
      return "void";
    case Kind::kUnknown:
      return unknown_text_;
  }
  return unknown_text_;
}

bool Transform::can_transform(const Type& source) const {
  const TypeKind kind = source.kind();
  switch (kind_) {
    case Kind::kIdentity:
      return source.is_primitive();
    case Kind::kBucket:
      return source.is_primitive() && kind != TypeKind::kBoolean && kind != TypeKind::kFloat &&
             kind != TypeKind::kDouble;
    case Kind::kTruncate:
      return kind == TypeKind::kInt || kind == TypeKind::kLong || kind == TypeKind::kDecimal ||
             kind == TypeKind::kString || kind == TypeKind::kBinary;
    case Kind::kYear:
    case Kind::kMonth:
    case Kind::kDay:
      return is_date_or_timestamp(kind);
    case Kind::kHour:
      return is_timestamp(kind);
    case Kind::kVoid:
      return true;
    case Kind::kUnknown:
      return false;
  }
  return false;
}

TypePtr Transform::result_type(const TypePtr& source) const {
  if (!can_transform(*source)) fail("transform {} cannot apply to {}", to_string(), source->to_string());
  switch (kind_) {
    case Kind::kIdentity:
    case Kind::kTruncate:
    case Kind::kVoid:
      return source;
    default:
      return int_type();
  }
}

Literal Transform::apply(const Type& source, const Literal& value) const {
  if (!can_transform(source)) fail("transform {} cannot apply to {}", to_string(), source.to_string());
  check_literal_type(source, value, to_string());
  if (std::holds_alternative<std::monostate>(value) || kind_ == Kind::kVoid) return std::monostate{};
  switch (kind_) {
    case Kind::kIdentity:
      return value;
    case Kind::kBucket:
      return static_cast<std::int32_t>((bucket_hash(source, value) & std::numeric_limits<std::int32_t>::max()) %
                                       parameter_);
    case Kind::kTruncate:
      if (const auto* number = std::get_if<std::int32_t>(&value)) {
        return narrowed<std::int32_t>(truncate_number<std::int64_t>(*number, parameter_), *this, source);
      }
      if (const auto* number = std::get_if<std::int64_t>(&value)) {
        return narrowed<std::int64_t>(truncate_number<Int128>(*number, parameter_), *this, source);
      }
      if (const auto* decimal = std::get_if<Decimal>(&value)) {
        // The width applies in units of the column's scale: W=50 at scale 2 truncates 10.65 to 10.50.
        return Decimal{truncate_number<Int128>(decimal->unscaled, parameter_)};
      }
      if (const auto* text = std::get_if<std::string>(&value)) return truncate_utf8(*text, parameter_);
      {
        const auto& bytes = std::get<Bytes>(value);
        return Bytes(bytes.begin(), bytes.begin() + std::min<std::ptrdiff_t>(parameter_, std::ssize(bytes)));
      }
    case Kind::kYear:
      return narrowed<std::int32_t>(civil_year_month(days_from_epoch(source, value)).year - 1970, *this, source);
    case Kind::kMonth: {
      const YearMonth date = civil_year_month(days_from_epoch(source, value));
      return narrowed<std::int32_t>((date.year - 1970) * 12 + date.month - 1, *this, source);
    }
    case Kind::kDay:
      return narrowed<std::int32_t>(days_from_epoch(source, value), *this, source);
    case Kind::kHour:
      return narrowed<std::int32_t>(floor_div(std::get<std::int64_t>(value), kMicrosPerHour), *this, source);
    default:
      fail("transform {} cannot compute values", to_string());
  }
}

}  // namespace binberg::iceberg
