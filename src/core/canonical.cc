#include "core/canonical.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <bit>
#include <cmath>

#include "core/error.h"

namespace binberg {
namespace {

template <typename T>
void append_big_endian(std::string& out, T value) {
  using U = std::make_unsigned_t<T>;
  const U bits = static_cast<U>(value);
  for (int shift = (sizeof(U) - 1) * 8; shift >= 0; shift -= 8) out.push_back(static_cast<char>(bits >> shift));
}

void append_sized(std::string& out, std::string_view bytes) {
  append_big_endian(out, static_cast<std::uint32_t>(bytes.size()));
  out.append(bytes);
}

struct Payload {
  std::string& out;
  void operator()(std::monostate) const {}
  void operator()(std::int64_t v) const { append_big_endian(out, v); }
  void operator()(std::uint64_t v) const { append_big_endian(out, v); }
  void operator()(float v) const {
    append_big_endian(out, std::isnan(v) ? std::uint32_t{0x7fc00000} : std::bit_cast<std::uint32_t>(v));
  }
  void operator()(double v) const {
    append_big_endian(out, std::isnan(v) ? std::uint64_t{0x7ff8000000000000} : std::bit_cast<std::uint64_t>(v));
  }
  void operator()(const Decimal& v) const { append_sized(out, v.digits); }
  void operator()(const Text& v) const { append_sized(out, v.utf8); }
  void operator()(const Bytes& v) const { append_sized(out, v.data); }
  void operator()(const Date& v) const { append_big_endian(out, v.days); }
  void operator()(const TimeOfDay& v) const { append_big_endian(out, v.micros); }
  void operator()(const DateTime& v) const { append_big_endian(out, v.micros); }
  void operator()(const Timestamp& v) const { append_big_endian(out, v.micros); }
};

}  // namespace

void append_canonical_value(std::string& out, const Value& value) {
  out.push_back(static_cast<char>(value.index()));
  std::visit(Payload{out}, value);
}

std::string canonical_row(const TableSchema& schema, const RowImage& image) {
  if (image.size() != schema.columns.size()) {
    fail("{}: row image has {} values for {} columns", schema.qualified_name(), image.size(), schema.columns.size());
  }
  std::string out;
  append_big_endian(out, static_cast<std::uint32_t>(image.size()));
  for (std::size_t i = 0; i < image.size(); ++i) {
    append_sized(out, schema.columns[i].name);
    append_canonical_value(out, image[i]);
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) fail("sha256 failed");
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

}  // namespace binberg
