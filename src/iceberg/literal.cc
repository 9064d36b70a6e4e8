#include "iceberg/detail/literal.h"

#include "core/error.h"

namespace binberg::iceberg {
namespace {

bool holds_alternative_of(const Type& type, const Literal& value) {
  switch (type.kind()) {
    case TypeKind::kBoolean:
      return std::holds_alternative<bool>(value);
    case TypeKind::kInt:
    case TypeKind::kDate:
      return std::holds_alternative<std::int32_t>(value);
    case TypeKind::kLong:
    case TypeKind::kTime:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestamptz:
      return std::holds_alternative<std::int64_t>(value);
    case TypeKind::kFloat:
      return std::holds_alternative<float>(value);
    case TypeKind::kDouble:
      return std::holds_alternative<double>(value);
    case TypeKind::kString:
      return std::holds_alternative<std::string>(value);
    case TypeKind::kUuid:
      return std::holds_alternative<Uuid>(value);
    case TypeKind::kFixed:
      return std::holds_alternative<Bytes>(value) &&
             std::get<Bytes>(value).size() == static_cast<std::size_t>(type.fixed_length());
    case TypeKind::kBinary:
      return std::holds_alternative<Bytes>(value);
    case TypeKind::kDecimal:
      return std::holds_alternative<Decimal>(value);
    case TypeKind::kStruct:
    case TypeKind::kList:
    case TypeKind::kMap:
      return false;
  }
  return false;
}

const char* alternative_name(const Literal& value) {
  static constexpr const char* kNames[] = {"null",   "boolean", "int32", "int64", "float",
                                           "double", "string",  "uuid",  "bytes", "decimal"};
  return kNames[value.index()];
}

}  // namespace

Bytes min_big_endian_bytes(const Decimal& value) {
  Bytes bytes(16);
  Int128 bits = value.unscaled;  // C++20 defines >> on negatives as arithmetic: sign bytes shift in
  for (auto it = bytes.rbegin(); it != bytes.rend(); ++it, bits >>= 8) *it = static_cast<std::uint8_t>(bits);
  // A leading byte is redundant when it only repeats the sign bit of the byte after it.
  std::size_t start = 0;
  while (start + 1 < bytes.size() && ((bytes[start] == 0x00 && (bytes[start + 1] & 0x80) == 0) ||
                                      (bytes[start] == 0xFF && (bytes[start + 1] & 0x80) != 0))) {
    ++start;
  }
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(start));
  return bytes;
}

void check_literal_type(const Type& type, const Literal& value, std::string_view what) {
  if (std::holds_alternative<std::monostate>(value) || holds_alternative_of(type, value)) return;
  if (type.kind() == TypeKind::kFixed && std::holds_alternative<Bytes>(value)) {
    fail("{}: a {} value must have {} bytes, got {}", what, type.to_string(), type.fixed_length(),
         std::get<Bytes>(value).size());
  }
  fail("{}: a {} value cannot be held as {}", what, type.to_string(), alternative_name(value));
}

}  // namespace binberg::iceberg
