#pragma once

// The Avro binary encoding: primitives (Encoder, Decoder) and whole datums driven by a schema.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "avro/schema.h"
#include "avro/value.h"
#include "core/error.h"

namespace binberg::avro {

// A malformed datum. The message names the problem and the byte offset; decoding adds the path of
// the value being read in the schema (e.g. "/fields/after/0/fields/name", in the style of encode's
// errors) as the error travels out of nested records, arrays, maps and unions.
class DecodeError : public Error {
 public:
  explicit DecodeError(std::string message);
  // The path inside the datum, "" when the problem is at the top level.
  const std::string& path() const { return path_; }
  // Adds a path segment in front ("fields/name", "3", a map key, a union branch).
  void prepend_path(std::string_view segment);

 private:
  std::string problem_;
  std::string path_;
};

// Deeper data is rejected: recursive schemas would otherwise let hostile input exhaust the stack.
inline constexpr int kMaxNestingDepth = 128;

// Items that may encode to zero bytes (nulls, empty records, fixed of size 0) cannot be bounded by
// the input size, so a Decoder reads at most this many of them in arrays and maps, all arrays
// together: a cap per array would let nested arrays multiply it. Container blocks of such values
// are capped at this many objects.
inline constexpr std::size_t kMaxEmptyItems = std::size_t{1} << 20;

// Appends encoded primitives to a byte string.
class Encoder {
 public:
  explicit Encoder(std::string& out) : out_(out) {}

  void write_bool(bool value) { out_.push_back(value ? '\1' : '\0'); }
  void write_int(std::int32_t value) { write_long(value); }
  void write_long(std::int64_t value);  // zig-zag varint
  void write_float(float value);        // little-endian IEEE 754
  void write_double(double value);
  void write_bytes(std::string_view bytes);  // long length, then the bytes
  void write_fixed(std::string_view bytes) { out_.append(bytes); }

 private:
  std::string& out_;
};

// Reads encoded primitives strictly: never past the buffer, no overlong varints, no negative or
// oversized lengths. Every error names the byte offset and what was being read.
class Decoder {
 public:
  // Errors name `context` and offsets counted from `base_offset` (the buffer's position in a larger input).
  explicit Decoder(std::string_view data, std::string context = "datum", std::size_t base_offset = 0)
      : data_(data), context_(std::move(context)), base_offset_(base_offset) {}

  bool read_bool();
  std::int32_t read_int();
  std::int64_t read_long();
  float read_float();
  double read_double();
  std::string_view read_bytes();  // a view into the buffer
  // read_bytes, then strict UTF-8 validation (see utf8.h): an invalid string is a DecodeError.
  std::string_view read_string();
  std::string_view read_fixed(std::size_t size);
  std::size_t read_union_branch(std::size_t branch_count);

  struct BlockHeader {
    std::size_t count = 0;                 // 0 after the last block
    std::optional<std::size_t> byte_size;  // present when the writer gave it (negative count)
  };
  BlockHeader read_block_header();

  // Counts `count` more items that may encode to zero bytes (see kMaxEmptyItems); throws, naming
  // the offset `at`, once the decoder has read more than its cap of them.
  void count_empty_items(std::size_t count, std::size_t at);
  // Lowers (or raises) this decoder's cap from kMaxEmptyItems, e.g. where memory is tighter.
  void set_max_empty_items(std::size_t limit) { max_empty_items_ = limit; }

  void skip(std::size_t size);
  // Throws when bytes remain: a buffer meant to hold whole datums holds more.
  void expect_end() const;
  std::size_t offset() const { return position_; }
  std::size_t remaining() const { return data_.size() - position_; }
  // Throws DecodeError.
  [[noreturn]] void fail_at(std::size_t offset, std::string_view problem) const;

  // Counts one level of nesting for as long as it lives; throws beyond kMaxNestingDepth.
  class Nesting {
   public:
    explicit Nesting(Decoder& decoder);
    ~Nesting() { --decoder_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Decoder& decoder_;
  };

 private:
  std::uint64_t read_varint(int max_bytes, std::uint8_t max_last_byte, std::string_view what);
  std::string_view take(std::size_t size, std::string_view what);

  std::string_view data_;
  std::size_t position_ = 0;
  std::string context_;
  std::size_t base_offset_;
  int depth_ = 0;
  std::size_t empty_items_ = 0;
  std::size_t max_empty_items_ = kMaxEmptyItems;
};

// Throws Error naming the path in the value (e.g. "/fields/price") when the value does not fit the schema
// or a string (or map key) is not valid UTF-8.
// A union accepts a Union, or any other value for the first branch of the value's kind.
void encode(const Node& schema, const Value& value, Encoder& encoder);
std::string encode(const Schema& schema, const Value& value);

// Decodes one datum at the decoder's position. Unions decode to Union, enums to Enum, fixed to Bytes.
// Strings and map keys must be valid UTF-8. Throws DecodeError naming the offset and the path.
Value decode(const Node& schema, Decoder& decoder);
// Decodes a buffer holding exactly one datum (trailing bytes are an error).
Value decode(const Schema& schema, std::string_view datum);
// Advances past one datum without building it (strings are not validated: their content is dropped).
void skip(const Node& schema, Decoder& decoder);

// True when a datum of the schema may encode to zero bytes (null, fixed of size 0, such records).
bool can_encode_empty(const Node& schema);

// Runs `body`; a DecodeError leaving it gets the path segment `segment()` returns prepended to its
// path. The segment is only built when there is an error, so the happy path pays nothing for it.
template <typename Segment, typename Body>
decltype(auto) with_decode_path(Segment&& segment, Body&& body) {
  try {
    return body();
  } catch (DecodeError& e) {
    e.prepend_path(segment());
    throw;
  }
}

// Calls `item` once per item of a blocked array or map (`item` reads a map key itself). Block counts are
// bounded by the input left, so hostile counts cannot allocate or loop without data to back them.
void for_each_item(const Node& items, Decoder& decoder, const std::function<void()>& item);

}  // namespace binberg::avro
