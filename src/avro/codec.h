#pragma once

// Block codecs of Avro object container files.

#include <cstddef>
#include <string>
#include <string_view>

namespace binberg::avro {

enum class Codec { kNull, kDeflate, kSnappy };

std::string_view codec_name(Codec codec);
// Throws Error for codecs binberg does not implement (e.g. "xz"), naming `where`.
Codec parse_codec(std::string_view name, std::string_view where);

// deflate is raw RFC 1951 data; snappy is a snappy block followed by the big-endian CRC-32 of the
// uncompressed data. `deflate_level` is zlib's 0-9 (or -1 for its default).
std::string compress(Codec codec, std::string_view data, int deflate_level = -1);
// Throws Error naming `where` for corrupt data, a CRC mismatch, or output beyond `max_size` bytes.
std::string decompress(Codec codec, std::string_view data, std::size_t max_size, std::string_view where);

}  // namespace binberg::avro
