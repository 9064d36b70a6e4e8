#pragma once

// Strict UTF-8 validation (RFC 3629, Unicode table 3-7) for Avro strings, which the specification
// defines as UTF-8. Rejected: overlong encodings (C0 80, E0 80 80, ...), UTF-16 surrogates
// (U+D800-U+DFFF, i.e. ED A0 80-ED BF BF, which also rules out CESU-8 and Java's "modified UTF-8"),
// code points above U+10FFFF, stray continuation bytes, the bytes F5-FF, and sequences cut short.
// U+0000 encoded as the single byte 00 is valid.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace binberg::avro {

struct Utf8Problem {
  std::size_t offset = 0;   // of the first byte of the offending sequence in the text
  std::string_view reason;  // "overlong encoding", "surrogate code point", ...
};

// The first invalid sequence, or nullopt when the whole text is valid UTF-8.
std::optional<Utf8Problem> find_invalid_utf8(std::string_view text);

inline bool is_valid_utf8(std::string_view text) { return !find_invalid_utf8(text); }

// The text with every byte outside printable ASCII written as \xNN, for error messages that quote
// data which may be invalid UTF-8 (e.g. a map key).
std::string printable_bytes(std::string_view text);

}  // namespace binberg::avro
