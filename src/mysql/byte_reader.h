#pragma once

// Bounds-checked reading of binlog structures. Every read past the end throws Error naming the
// offset and what was being read, so a malformed event can never be read out of bounds.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace binberg::mysql {

class ByteReader {
 public:
  ByteReader(std::string_view data, std::string context) : data_(data), context_(std::move(context)) {}

  std::size_t offset() const { return offset_; }
  std::size_t remaining() const { return data_.size() - offset_; }
  bool at_end() const { return offset_ == data_.size(); }

  std::string_view take(std::size_t count, const char* what) {
    if (count > remaining()) {
      fail("{}: truncated {}: needs {} bytes at offset {}, {} left", context_, what, count, offset_, remaining());
    }
    std::string_view out = data_.substr(offset_, count);
    offset_ += count;
    return out;
  }

  std::uint8_t u8(const char* what) { return static_cast<std::uint8_t>(take(1, what)[0]); }

  std::uint64_t little_endian(std::size_t bytes, const char* what) {
    std::string_view raw = take(bytes, what);
    std::uint64_t value = 0;
    for (std::size_t i = bytes; i-- > 0;) value = (value << 8) | static_cast<std::uint8_t>(raw[i]);
    return value;
  }

  std::uint64_t big_endian(std::size_t bytes, const char* what) {
    std::string_view raw = take(bytes, what);
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < bytes; ++i) value = (value << 8) | static_cast<std::uint8_t>(raw[i]);
    return value;
  }

  // MySQL's length-encoded integer (net_field_length).
  std::uint64_t packed(const char* what) {
    const std::uint8_t first = u8(what);
    if (first < 251) return first;
    if (first == 252) return little_endian(2, what);
    if (first == 253) return little_endian(3, what);
    if (first == 254) return little_endian(8, what);
    fail("{}: invalid length-encoded integer 0x{:02x} for {} at offset {}", context_, first, what, offset_ - 1);
  }

  std::string_view packed_string(const char* what) { return take(packed(what), what); }

  const std::string& context() const { return context_; }

 private:
  std::string_view data_;
  std::size_t offset_ = 0;
  std::string context_;
};

// Bit I of a MySQL bitmap (least significant bit of byte 0 first).
inline bool bit_set(std::string_view bitmap, std::size_t i) {
  return (static_cast<std::uint8_t>(bitmap[i / 8]) >> (i % 8)) & 1;
}

}  // namespace binberg::mysql
