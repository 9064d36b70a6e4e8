#include "avro/codec.h"

#include <snappy.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>

#include "core/error.h"

namespace binberg::avro {

namespace {

std::uint32_t crc32_of(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large inputs in pieces.
  for (std::size_t done = 0; done < data.size();) {
    const auto piece = static_cast<uInt>(std::min<std::size_t>(data.size() - done, std::numeric_limits<uInt>::max()));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data() + done), piece);
    done += piece;
  }
  return static_cast<std::uint32_t>(crc);
}

std::string deflate_raw(std::string_view data, int level) {
  z_stream stream{};
  // Negative window bits: raw deflate without the zlib header and checksum, as Avro requires.
  if (deflateInit2(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    fail("avro deflate: cannot initialize zlib with level {}", level);
  }
  const std::unique_ptr<z_stream, int (*)(z_stream*)> cleanup(&stream, deflateEnd);
  std::string out(deflateBound(&stream, static_cast<uLong>(data.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  if (data.size() > std::numeric_limits<uInt>::max() || deflate(&stream, Z_FINISH) != Z_STREAM_END) {
    fail("avro deflate: compressing a block of {} bytes failed", data.size());
  }
  out.resize(stream.total_out);
  return out;
}

// Bytes after the end of the deflate stream are ignored, as zlib-based readers do: fastavro, for one,
// leaves three bytes of the zlib checksum there.
std::string inflate_raw(std::string_view data, std::size_t max_size, std::string_view where) {
  z_stream stream{};
  if (inflateInit2(&stream, -15) != Z_OK) fail("avro deflate: cannot initialize zlib for {}", where);
  const std::unique_ptr<z_stream, int (*)(z_stream*)> cleanup(&stream, inflateEnd);
  if (data.size() > std::numeric_limits<uInt>::max()) fail("avro deflate: {} is too large", where);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string out;
  std::array<char, 64 * 1024> chunk;
  for (;;) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk.data());
    stream.avail_out = static_cast<uInt>(chunk.size());
    const int status = inflate(&stream, Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END) {
      fail("avro deflate: corrupt data in {}: {}", where, stream.msg ? stream.msg : "truncated");
    }
    const std::size_t produced = chunk.size() - stream.avail_out;
    if (out.size() + produced > max_size) fail("avro deflate: {} inflates beyond {} bytes", where, max_size);
    out.append(chunk.data(), produced);
    if (status == Z_STREAM_END) break;
    if (stream.avail_in == 0 && produced == 0) fail("avro deflate: truncated data in {}", where);
  }
  return out;
}

std::string snappy_compress(std::string_view data) {
  std::string out;
  snappy::Compress(data.data(), data.size(), &out);
  const std::uint32_t crc = crc32_of(data);
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((crc >> shift) & 0xff));
  return out;
}

std::string snappy_uncompress(std::string_view data, std::size_t max_size, std::string_view where) {
  if (data.size() < 4) fail("avro snappy: {} is shorter than its 4-byte CRC", where);
  const std::string_view compressed = data.substr(0, data.size() - 4);
  std::uint32_t expected_crc = 0;
  for (const char byte : data.substr(data.size() - 4))
    expected_crc = (expected_crc << 8) | static_cast<std::uint8_t>(byte);
  std::size_t length = 0;
  if (!snappy::GetUncompressedLength(compressed.data(), compressed.size(), &length)) {
    fail("avro snappy: corrupt length in {}", where);
  }
  if (length > max_size) fail("avro snappy: {} uncompresses to {} bytes, beyond {}", where, length, max_size);
  std::string out(length, '\0');
  if (!snappy::RawUncompress(compressed.data(), compressed.size(), out.data())) {
    fail("avro snappy: corrupt data in {}", where);
  }
  if (const std::uint32_t crc = crc32_of(out); crc != expected_crc) {
    fail("avro snappy: CRC mismatch in {}: stored {:08x}, computed {:08x}", where, expected_crc, crc);
  }
  return out;
}

}  // namespace

std::string_view codec_name(Codec codec) {
  switch (codec) {
    case Codec::kDeflate:
      return "deflate";
    case Codec::kSnappy:
      return "snappy";
    default:
      return "null";
  }
}

Codec parse_codec(std::string_view name, std::string_view where) {
  for (const Codec codec : {Codec::kNull, Codec::kDeflate, Codec::kSnappy}) {
    if (codec_name(codec) == name) return codec;
  }
  fail("avro: unsupported codec '{}' in {}", name, where);
}

std::string compress(Codec codec, std::string_view data, int deflate_level) {
  switch (codec) {
    case Codec::kDeflate:
      return deflate_raw(data, deflate_level);
    case Codec::kSnappy:
      return snappy_compress(data);
    default:
      return std::string(data);
  }
}

std::string decompress(Codec codec, std::string_view data, std::size_t max_size, std::string_view where) {
  switch (codec) {
    case Codec::kDeflate:
      return inflate_raw(data, max_size, where);
    case Codec::kSnappy:
      return snappy_uncompress(data, max_size, where);
    default:
      return std::string(data);
  }
}

}  // namespace binberg::avro
