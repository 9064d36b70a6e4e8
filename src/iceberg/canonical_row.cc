#include "iceberg/canonical_row.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

#include "core/error.h"

namespace binberg::iceberg {
namespace {

std::string hex(const std::uint8_t* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text(size * 2, '0');
  for (std::size_t i = 0; i < size; ++i) {
    text[2 * i] = kDigits[data[i] >> 4];
    text[2 * i + 1] = kDigits[data[i] & 0x0F];
  }
  return text;
}

std::string double_bits(double value) { return fmt::format("{:016x}", std::bit_cast<std::uint64_t>(value)); }

std::string decimal_text(Int128 unscaled, int scale) {
  const bool negative = unscaled < 0;
  // Negate in unsigned arithmetic: -INT128_MIN does not fit.
  UInt128 magnitude = negative ? UInt128{0} - static_cast<UInt128>(unscaled) : static_cast<UInt128>(unscaled);
  // Digits are produced least significant first into a fixed buffer; 2^128 has 39 digits, and the
  // buffer also holds the zero padding a scale larger than the digit count needs.
  const auto fraction = static_cast<std::size_t>(scale > 0 ? scale : 0);
  std::string reversed;
  reversed.reserve(48 + fraction);
  do {
    reversed.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  while (reversed.size() <= fraction && fraction > 0) reversed.push_back('0');
  std::string text;
  text.reserve(reversed.size() + 2);
  if (negative) text.push_back('-');
  for (std::size_t i = reversed.size(); i-- > 0;) {
    text.push_back(reversed[i]);
    if (fraction > 0 && i == fraction) text.push_back('.');
  }
  return text;
}

}  // namespace

std::optional<std::string> canonical_text(const Type& type, const Literal& value) {
  check_literal_type(type, value, "canonical row value");
  return std::visit(
      [&](const auto& v) -> std::optional<std::string> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          return double_bits(static_cast<double>(v));
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, Uuid>) {
          return hex(v.bytes.data(), v.bytes.size());
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return hex(v.data(), v.size());
        } else {
          static_assert(std::is_same_v<T, Decimal>);
          return decimal_text(v.unscaled, type.decimal_scale());
        }
      },
      value);
}

std::string canonical_row_encoding(const Schema& schema, const Row& row) {
  const auto& fields = schema.fields();
  if (row.size() != fields.size()) fail("canonical row: {} values for {} columns", row.size(), fields.size());
  std::string encoding;
  for (std::size_t c = 0; c < fields.size(); ++c) {
    if (!fields[c].type->is_primitive()) fail("canonical row: column {} is not of a primitive type", fields[c].name);
    const auto text = canonical_text(*fields[c].type, row[c]);
    if (!text) {
      encoding += '-';
      continue;
    }
    encoding += std::to_string(text->size());
    encoding += ':';
    encoding += *text;
  }
  encoding += '\n';
  return encoding;
}

std::string RowDigest::finish() {
  std::sort(rows_.begin(), rows_.end());
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) fail("SHA-256: cannot initialize");
  for (const std::string& row : rows_) EVP_DigestUpdate(context.get(), row.data(), row.size());
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest, &length);
  return hex(digest, length);
}

}  // namespace binberg::iceberg
