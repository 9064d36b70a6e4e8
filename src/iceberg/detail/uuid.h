#pragma once

// UUIDs as Iceberg uses them: table-uuid in metadata, uuid column values (16 bytes big-endian, the
// byte order of the canonical text form), and the random part of metadata file names.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace binberg::iceberg {

struct Uuid {
  std::array<std::uint8_t, 16> bytes{};

  // A version 4 (random) UUID from the OpenSSL CSPRNG.
  static Uuid random();
  // Canonical 8-4-4-4-12 hex form, either case; throws Error naming TEXT otherwise.
  static Uuid parse(std::string_view text);
  // Lowercase canonical form.
  std::string to_string() const;

  friend bool operator==(const Uuid&, const Uuid&) = default;
};

}  // namespace binberg::iceberg
