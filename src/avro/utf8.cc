#include "avro/utf8.h"

#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace binberg::avro {

namespace {

bool is_continuation(std::uint8_t byte) { return (byte & 0xc0) == 0x80; }

}  // namespace

std::optional<Utf8Problem> find_invalid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    // ASCII fast path, eight bytes at a time: most strings in change events are ASCII.
    while (i + 8 <= size) {
      std::uint64_t word;
      std::memcpy(&word, bytes + i, sizeof word);
      if ((word & 0x8080808080808080ULL) != 0) break;
      i += 8;
    }
    if (i >= size) break;
    const std::uint8_t lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    // Per lead byte: the sequence length and the range its second byte must fall in (table 3-7).
    std::size_t length = 0;
    std::uint8_t low = 0x80;
    std::uint8_t high = 0xbf;
    if (lead < 0xc0) return Utf8Problem{i, "unexpected continuation byte"};
    if (lead < 0xc2) return Utf8Problem{i, "overlong encoding"};  // C0, C1: code points below U+0080
    if (lead < 0xe0) {
      length = 2;
    } else if (lead < 0xf0) {
      length = 3;
      if (lead == 0xe0) low = 0xa0;   // below U+0800: overlong
      if (lead == 0xed) high = 0x9f;  // U+D800-U+DFFF: surrogates
    } else if (lead < 0xf5) {
      length = 4;
      if (lead == 0xf0) low = 0x90;   // below U+10000: overlong
      if (lead == 0xf4) high = 0x8f;  // above U+10FFFF
    } else {
      return Utf8Problem{i, lead < 0xf8 ? "code point above U+10FFFF" : "invalid byte"};
    }
    for (std::size_t k = 1; k < length; ++k) {
      if (i + k >= size || !is_continuation(bytes[i + k])) return Utf8Problem{i, "truncated sequence"};
    }
    const std::uint8_t second = bytes[i + 1];
    if (second < low) return Utf8Problem{i, "overlong encoding"};
    if (second > high) return Utf8Problem{i, lead == 0xed ? "surrogate code point" : "code point above U+10FFFF"};
    i += length;
  }
  return std::nullopt;
}

std::string printable_bytes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<std::uint8_t>(c);
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      out.push_back(c);
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  return out;
}

}  // namespace binberg::avro
