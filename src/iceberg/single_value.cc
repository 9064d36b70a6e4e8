#include "iceberg/single_value.h"

#include <bit>
#include <cstring>

#include "core/error.h"

namespace binberg::iceberg {
namespace {

static_assert(std::endian::native == std::endian::little, "Appendix D values are little-endian");

template <typename T>
Bytes little_endian(T value) {
  Bytes bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

template <typename T>
T from_little_endian(const Bytes& bytes, const Type& type, std::string_view what) {
  if (bytes.size() != sizeof(T)) {
    fail("{}: a {} single value has {} bytes, got {}", what, type.to_string(), sizeof(T), bytes.size());
  }
  T value;
  std::memcpy(&value, bytes.data(), sizeof(T));
  return value;
}

}  // namespace

Bytes to_single_value(const Type& type, const Literal& value) {
  check_literal_type(type, value, "single value");
  if (std::holds_alternative<std::monostate>(value)) fail("single value: null has no binary form");
  switch (type.kind()) {
    case TypeKind::kBoolean:
      return Bytes{static_cast<std::uint8_t>(std::get<bool>(value) ? 1 : 0)};
    case TypeKind::kInt:
    case TypeKind::kDate:
      return little_endian(std::get<std::int32_t>(value));
    case TypeKind::kLong:
    case TypeKind::kTime:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestamptz:
      return little_endian(std::get<std::int64_t>(value));
    case TypeKind::kFloat:
      return little_endian(std::get<float>(value));
    case TypeKind::kDouble:
      return little_endian(std::get<double>(value));
    case TypeKind::kString: {
      const auto& text = std::get<std::string>(value);
      return Bytes(text.begin(), text.end());
    }
    case TypeKind::kUuid: {
      const auto& uuid = std::get<Uuid>(value);
      return Bytes(uuid.bytes.begin(), uuid.bytes.end());
    }
    case TypeKind::kFixed:
    case TypeKind::kBinary:
      return std::get<Bytes>(value);
    case TypeKind::kDecimal:
      return min_big_endian_bytes(std::get<Decimal>(value));
    case TypeKind::kStruct:
    case TypeKind::kList:
    case TypeKind::kMap:
      break;
  }
  fail("single value: {} has no binary form", type.to_string());
}

Literal from_single_value(const Type& type, const Bytes& bytes, std::string_view what) {
  switch (type.kind()) {
    case TypeKind::kBoolean:
      if (bytes.size() != 1 || bytes[0] > 1) fail("{}: a boolean single value is one byte 0 or 1", what);
      return bytes[0] == 1;
    case TypeKind::kInt:
    case TypeKind::kDate:
      return from_little_endian<std::int32_t>(bytes, type, what);
    case TypeKind::kLong:
    case TypeKind::kTime:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestamptz:
      return from_little_endian<std::int64_t>(bytes, type, what);
    case TypeKind::kFloat:
      return from_little_endian<float>(bytes, type, what);
    case TypeKind::kDouble:
      return from_little_endian<double>(bytes, type, what);
    case TypeKind::kString:
      return std::string(bytes.begin(), bytes.end());
    case TypeKind::kUuid: {
      if (bytes.size() != 16) fail("{}: a uuid single value has 16 bytes, got {}", what, bytes.size());
      Uuid uuid;
      std::memcpy(uuid.bytes.data(), bytes.data(), 16);
      return uuid;
    }
    case TypeKind::kFixed:
      if (bytes.size() != static_cast<std::size_t>(type.fixed_length())) {
        fail("{}: a {} single value has {} bytes, got {}", what, type.to_string(), type.fixed_length(), bytes.size());
      }
      return bytes;
    case TypeKind::kBinary:
      return bytes;
    case TypeKind::kDecimal: {
      if (bytes.empty() || bytes.size() > 16)
        fail("{}: a decimal single value has 1 to 16 bytes, got {}", what, bytes.size());
      // Sign-extend from the first byte, then shift the rest in.
      Int128 unscaled = (bytes[0] & 0x80) != 0 ? -1 : 0;
      for (std::uint8_t byte : bytes) unscaled = static_cast<Int128>((static_cast<UInt128>(unscaled) << 8) | byte);
      return Decimal{unscaled};
    }
    case TypeKind::kStruct:
    case TypeKind::kList:
    case TypeKind::kMap:
      break;
  }
  fail("{}: {} has no binary single value", what, type.to_string());
}

}  // namespace binberg::iceberg
