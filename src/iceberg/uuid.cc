#include "iceberg/detail/uuid.h"

#include <openssl/err.h>
#include <openssl/rand.h>

#include "core/error.h"

namespace binberg::iceberg {
namespace {

constexpr std::string_view kHexDigits = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_dash_position(std::size_t index) { return index == 8 || index == 13 || index == 18 || index == 23; }

}  // namespace

Uuid Uuid::random() {
  Uuid uuid;
  if (RAND_bytes(uuid.bytes.data(), static_cast<int>(uuid.bytes.size())) != 1) {
    fail("cannot generate a random UUID: OpenSSL RAND_bytes failed (error {})", ERR_get_error());
  }
  uuid.bytes[6] = static_cast<std::uint8_t>((uuid.bytes[6] & 0x0F) | 0x40);  // version 4
  uuid.bytes[8] = static_cast<std::uint8_t>((uuid.bytes[8] & 0x3F) | 0x80);  // RFC 4122 variant
  return uuid;
}

Uuid Uuid::parse(std::string_view text) {
  Uuid uuid;
  bool valid = text.size() == 36;
  std::size_t byte = 0;
  for (std::size_t i = 0; valid && i < text.size(); ++i) {
    if (is_dash_position(i)) {
      valid = text[i] == '-';
      continue;
    }
    // Every hex group has an even length, so a digit pair never straddles a dash.
    const int high = hex_value(text[i]);
    const int low = hex_value(text[++i]);
    valid = high >= 0 && low >= 0;
    if (valid) uuid.bytes[byte++] = static_cast<std::uint8_t>(high * 16 + low);
  }
  if (!valid) fail("invalid UUID \"{}\": expected the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", text);
  return uuid;
}

std::string Uuid::to_string() const {
  std::string text;
  text.reserve(36);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text.push_back('-');
    text.push_back(kHexDigits[bytes[i] >> 4]);
    text.push_back(kHexDigits[bytes[i] & 0x0F]);
  }
  return text;
}

}  // namespace binberg::iceberg
