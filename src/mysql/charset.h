#pragma once

// Character sets of source columns: collation id -> charset name (from the server's
// information_schema, or a built-in table of common ids), and conversion of column bytes to UTF-8.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace binberg::mysql {

class Connection;

class CharsetNames {
 public:
  // Common collations only (enough for unit tests); sources load the full table.
  static CharsetNames builtin();
  // Every collation the server knows (information_schema.COLLATIONS).
  static CharsetNames load(Connection& connection);

  // Charset name of collation ID; throws Error naming the id when unknown.
  const std::string& charset_of(std::uint32_t collation_id) const;
  void add(std::uint32_t collation_id, std::string charset) { names_[collation_id] = std::move(charset); }

 private:
  std::map<std::uint32_t, std::string> names_;
};

// Converts text in a MySQL charset to UTF-8. Thread-compatible (one per decoder).
class Utf8Converter {
 public:
  Utf8Converter();
  ~Utf8Converter();
  Utf8Converter(const Utf8Converter&) = delete;
  Utf8Converter& operator=(const Utf8Converter&) = delete;

  // Throws Error if CHARSET is unsupported or BYTES are invalid in it.
  std::string to_utf8(std::string_view bytes, const std::string& charset);

 private:
  struct Converters;
  std::unique_ptr<Converters> converters_;
};

// True if BYTES is well-formed UTF-8 (no overlongs, no surrogates, at most U+10FFFF).
bool is_valid_utf8(std::string_view bytes);

}  // namespace binberg::mysql
