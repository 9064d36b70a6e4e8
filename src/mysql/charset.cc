#include "mysql/charset.h"

#include <iconv.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "mysql/connection.h"

namespace binberg::mysql {
namespace {

// MySQL charset names -> iconv names. MySQL's "latin1" is Windows-1252, not ISO-8859-1.
const std::map<std::string, std::string, std::less<>>& iconv_names() {
  static const std::map<std::string, std::string, std::less<>> names = {
      {"latin1", "CP1252"},      {"latin2", "ISO-8859-2"},   {"latin5", "ISO-8859-9"},
      {"latin7", "ISO-8859-13"}, {"cp1250", "CP1250"},       {"cp1251", "CP1251"},
      {"cp1256", "CP1256"},      {"cp1257", "CP1257"},       {"cp850", "CP850"},
      {"cp852", "CP852"},        {"cp866", "CP866"},         {"koi8r", "KOI8-R"},
      {"koi8u", "KOI8-U"},       {"greek", "ISO-8859-7"},    {"hebrew", "ISO-8859-8"},
      {"tis620", "TIS-620"},     {"ucs2", "UCS-2BE"},        {"utf16", "UTF-16BE"},
      {"utf16le", "UTF-16LE"},   {"utf32", "UTF-32BE"},      {"gbk", "GBK"},
      {"gb2312", "GB2312"},      {"big5", "BIG5"},           {"sjis", "SHIFT_JIS"},
      {"cp932", "CP932"},        {"ujis", "EUC-JP"},         {"eucjpms", "EUC-JP-MS"},
      {"euckr", "EUC-KR"},       {"macroman", "MACINTOSH"},  {"macce", "MAC-CENTRALEUROPE"},
      {"armscii8", "ARMSCII-8"}, {"geostd8", "GEORGIAN-PS"}, {"keybcs2", "KEYBCS2"},
      {"cp1254", "CP1254"},
  };
  return names;
}

}  // namespace

CharsetNames CharsetNames::builtin() {
  CharsetNames names;
  for (std::uint32_t id : {33u, 83u, 192u, 213u, 223u}) names.add(id, "utf8mb3");
  for (std::uint32_t id : {45u, 46u, 224u, 225u, 245u, 246u, 255u}) names.add(id, "utf8mb4");
  for (std::uint32_t id : {5u, 8u, 15u, 31u, 47u, 48u, 49u, 94u}) names.add(id, "latin1");
  names.add(11, "ascii");
  names.add(65, "ascii");
  names.add(63, "binary");
  names.add(35, "ucs2");
  names.add(54, "utf16");
  names.add(56, "utf16le");
  names.add(60, "utf32");
  names.add(28, "gbk");
  return names;
}

CharsetNames CharsetNames::load(Connection& connection) {
  CharsetNames names;
  for (const auto& row : connection.query("SELECT ID, CHARACTER_SET_NAME FROM information_schema.COLLATIONS").rows) {
    if (row[0] && row[1]) names.add(static_cast<std::uint32_t>(std::stoul(*row[0])), *row[1]);
  }
  if (names.names_.empty()) fail("mysql {}: information_schema.COLLATIONS is empty", connection.options().address());
  return names;
}

const std::string& CharsetNames::charset_of(std::uint32_t collation_id) const {
  auto it = names_.find(collation_id);
  if (it == names_.end())
    fail("unknown collation id {} (not in the server's information_schema.COLLATIONS)", collation_id);
  return it->second;
}

bool is_valid_utf8(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto c = static_cast<std::uint8_t>(bytes[i]);
    std::size_t length = 0;
    std::uint32_t code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      length = 2;
      code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      length = 3;
      code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      length = 4;
      code = c & 0x07;
    } else {
      return false;
    }
    if (i + length > bytes.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<std::uint8_t>(bytes[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    static constexpr std::uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kMinimum[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

struct Utf8Converter::Converters {
  std::map<std::string, iconv_t, std::less<>> by_charset;
  ~Converters() {
    for (auto& [name, cd] : by_charset) iconv_close(cd);
  }
};

Utf8Converter::Utf8Converter() : converters_(std::make_unique<Converters>()) {}
Utf8Converter::~Utf8Converter() = default;

std::string Utf8Converter::to_utf8(std::string_view bytes, const std::string& charset) {
  if (charset == "utf8mb4" || charset == "utf8mb3" || charset == "utf8" || charset == "ascii") {
    if (!is_valid_utf8(bytes)) fail("text is not valid {}", charset);
    return std::string(bytes);
  }
  auto it = converters_->by_charset.find(charset);
  if (it == converters_->by_charset.end()) {
    auto name = iconv_names().find(charset);
    if (name == iconv_names().end()) fail("character set '{}' is not supported", charset);
    iconv_t cd = iconv_open("UTF-8", name->second.c_str());
    if (cd == reinterpret_cast<iconv_t>(-1))
      fail("character set '{}' ({}) has no converter here", charset, name->second);
    it = converters_->by_charset.emplace(charset, cd).first;
  }
  iconv(it->second, nullptr, nullptr, nullptr, nullptr);  // reset shift state
  std::string out(bytes.size() * 4 + 4, '\0');
  char* in_ptr = const_cast<char*>(bytes.data());
  std::size_t in_left = bytes.size();
  char* out_ptr = out.data();
  std::size_t out_left = out.size();
  if (iconv(it->second, &in_ptr, &in_left, &out_ptr, &out_left) == static_cast<std::size_t>(-1)) {
    fail("text is not valid {} at byte {} ({})", charset, bytes.size() - in_left, std::strerror(errno));
  }
  out.resize(out.size() - out_left);
  return out;
}

}  // namespace binberg::mysql
