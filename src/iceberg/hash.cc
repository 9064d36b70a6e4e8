#include "iceberg/hash.h"

#include <array>
#include <bit>

#include "core/error.h"

namespace binberg::iceberg {
namespace {

constexpr std::uint32_t kC1 = 0xcc9e2d51;
constexpr std::uint32_t kC2 = 0x1b873593;

std::uint32_t mix_block(std::uint32_t k) { return std::rotl(k * kC1, 15) * kC2; }

std::uint32_t hash_bytes(std::span<const std::uint8_t> bytes) { return murmur3_x86_32(bytes); }

std::uint32_t hash_long(std::int64_t value) {
  std::array<std::uint8_t, 8> little_endian{};
  auto bits = static_cast<std::uint64_t>(value);
  for (auto& byte : little_endian) {
    byte = static_cast<std::uint8_t>(bits);
    bits >>= 8;
  }
  return hash_bytes(little_endian);
}

}  // namespace

std::uint32_t murmur3_x86_32(std::span<const std::uint8_t> data, std::uint32_t seed) {
  std::uint32_t hash = seed;
  const std::size_t block_bytes = data.size() / 4 * 4;
  for (std::size_t i = 0; i < block_bytes; i += 4) {
    const std::uint32_t block = static_cast<std::uint32_t>(data[i]) | static_cast<std::uint32_t>(data[i + 1]) << 8 |
                                static_cast<std::uint32_t>(data[i + 2]) << 16 |
                                static_cast<std::uint32_t>(data[i + 3]) << 24;
    hash ^= mix_block(block);
    hash = std::rotl(hash, 13) * 5 + 0xe6546b64;
  }
  std::uint32_t tail = 0;
  for (std::size_t i = data.size(); i > block_bytes; --i) tail = tail << 8 | data[i - 1];
  if (data.size() > block_bytes) hash ^= mix_block(tail);

  hash ^= static_cast<std::uint32_t>(data.size());
  hash ^= hash >> 16;
  hash *= 0x85ebca6b;
  hash ^= hash >> 13;
  hash *= 0xc2b2ae35;
  hash ^= hash >> 16;
  return hash;
}

std::int32_t bucket_hash(const Type& type, const Literal& value) {
  check_literal_type(type, value, "bucket hash");
  if (std::holds_alternative<std::monostate>(value)) fail("bucket hash: null has no hash");
  std::uint32_t hash = 0;
  switch (type.kind()) {
    case TypeKind::kInt:
    case TypeKind::kDate:
      hash = hash_long(std::get<std::int32_t>(value));
      break;
    case TypeKind::kLong:
    case TypeKind::kTime:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestamptz:
      hash = hash_long(std::get<std::int64_t>(value));
      break;
    case TypeKind::kDecimal:
      hash = hash_bytes(min_big_endian_bytes(std::get<Decimal>(value)));
      break;
    case TypeKind::kString: {
      const auto& text = std::get<std::string>(value);
      hash = hash_bytes({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
      break;
    }
    case TypeKind::kUuid:
      hash = hash_bytes(std::get<Uuid>(value).bytes);
      break;
    case TypeKind::kFixed:
    case TypeKind::kBinary:
      hash = hash_bytes(std::get<Bytes>(value));
      break;
    default:
      fail("bucket hash: {} values cannot be bucketed", type.to_string());
  }
  return static_cast<std::int32_t>(hash);
}

}  // namespace binberg::iceberg
