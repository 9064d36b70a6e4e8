#include "mysql/row_decoder.h"

#include <bit>
#include <cstring>

#include "core/error.h"
#include "mysql/byte_reader.h"

namespace binberg::mysql {
namespace {

namespace bt = binlog_type;

constexpr std::int64_t kMicrosPerSecond = 1000000;

template <typename T>
T sign_extend(std::uint64_t value, unsigned bytes) {
  const unsigned shift = 64 - bytes * 8;
  return static_cast<T>(static_cast<std::int64_t>(value << shift) >> shift);
}

Value integer(ByteReader& reader, unsigned bytes, bool is_unsigned) {
  const std::uint64_t raw = reader.little_endian(bytes, "integer");
  if (is_unsigned) return std::uint64_t{raw};
  return sign_extend<std::int64_t>(raw, bytes);
}

// NEWDECIMAL: groups of 9 digits in 4 bytes, big-endian, sign in the top bit of the first byte
// (set for positive); negative values are stored with every byte inverted.
Decimal decimal(ByteReader& reader, unsigned precision, unsigned scale) {
  static constexpr unsigned kDigitBytes[] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  const unsigned integral = precision - scale;
  const unsigned integral_full = integral / 9, integral_rest = integral % 9;
  const unsigned fraction_full = scale / 9, fraction_rest = scale % 9;
  const std::size_t size =
      integral_full * 4 + kDigitBytes[integral_rest] + fraction_full * 4 + kDigitBytes[fraction_rest];
  std::string bytes(reader.take(size, "decimal"));
  if (bytes.empty()) return Decimal{"0"};
  const bool negative = (static_cast<std::uint8_t>(bytes[0]) & 0x80) == 0;
  bytes[0] = static_cast<char>(bytes[0] ^ 0x80);
  if (negative) {
    for (char& c : bytes) c = static_cast<char>(~c);
  }
  ByteReader digits(bytes, reader.context());
  std::string integer_part, fraction_part;
  auto group = [&](unsigned bytes_in_group, unsigned digit_count, std::string& out) {
    const std::uint64_t value = digits.big_endian(bytes_in_group, "decimal digits");
    if (value >= 1000000000ULL) fail("{}: decimal digit group {} out of range", reader.context(), value);
    out += fmt::format("{:0{}}", value, digit_count);
  };
  if (integral_rest > 0) group(kDigitBytes[integral_rest], integral_rest, integer_part);
  for (unsigned i = 0; i < integral_full; ++i) group(4, 9, integer_part);
  for (unsigned i = 0; i < fraction_full; ++i) group(4, 9, fraction_part);
  if (fraction_rest > 0) group(kDigitBytes[fraction_rest], fraction_rest, fraction_part);
  const auto first_digit = integer_part.find_first_not_of('0');
  integer_part = first_digit == std::string::npos ? "0" : integer_part.substr(first_digit);
  std::string out = integer_part;
  if (scale > 0) out += "." + fraction_part;
  const bool zero = out.find_first_not_of("0.") == std::string::npos;
  if (negative && !zero) out.insert(out.begin(), '-');
  return Decimal{std::move(out)};
}

// DATETIME2 stores its fraction signed, TIMESTAMP2 unsigned.
enum class FractionSign { kUnsigned, kSigned };

// Fractional seconds of TIME2/DATETIME2/TIMESTAMP2: (fsp + 1) / 2 big-endian bytes.
std::int64_t fraction_micros(ByteReader& reader, unsigned fsp, FractionSign sign) {
  const unsigned bytes = (fsp + 1) / 2;
  if (bytes == 0) return 0;
  const std::uint64_t raw = reader.big_endian(bytes, "fractional seconds");
  const std::int64_t value =
      sign == FractionSign::kSigned ? sign_extend<std::int64_t>(raw, bytes) : static_cast<std::int64_t>(raw);
  static constexpr std::int64_t kScale[] = {1, 10000, 100, 1};  // by byte count
  return value * kScale[bytes];
}

TimeOfDay time2(ByteReader& reader, unsigned fsp) {
  // A packed value: 1 sign bit, 1 unused, 10 bits hours, 6 minutes, 6 seconds, 24 bits micros.
  constexpr std::int64_t kIntOffset = 0x800000;
  std::int64_t int_part = static_cast<std::int64_t>(reader.big_endian(3, "time")) - kIntOffset;
  std::int64_t packed = 0;
  const unsigned frac_bytes = (fsp + 1) / 2;
  if (frac_bytes == 3) {
    // With 6 fraction bytes the whole 48-bit value is one offset-binary number.
    const std::int64_t frac = static_cast<std::int64_t>(reader.big_endian(3, "time fraction"));
    packed = ((int_part + kIntOffset) << 24 | frac) - (kIntOffset << 24);
  } else {
    std::int64_t frac = 0;
    if (frac_bytes > 0) {
      // The fraction is unsigned; a negative time borrows one second from the integer part.
      frac = static_cast<std::int64_t>(reader.big_endian(frac_bytes, "time fraction"));
      if (int_part < 0 && frac != 0) {
        ++int_part;
        frac -= frac_bytes == 1 ? 0x100 : 0x10000;
      }
      frac *= frac_bytes == 1 ? 10000 : 100;
    }
    packed = (int_part << 24) + frac;
  }
  const bool negative = packed < 0;
  if (negative) packed = -packed;
  const std::int64_t hms = packed >> 24;
  const std::int64_t hours = (hms >> 12) % (1 << 10), minutes = (hms >> 6) % (1 << 6), seconds = hms % (1 << 6);
  const std::int64_t micros = ((hours * 3600 + minutes * 60 + seconds) * kMicrosPerSecond) + packed % (1 << 24);
  return TimeOfDay{negative ? -micros : micros};
}

std::int64_t civil_micros(std::int64_t year, std::int64_t month, std::int64_t day, std::int64_t hour,
                          std::int64_t minute, std::int64_t second, const std::string& where) {
  if (month < 1 || month > 12 || day < 1 || day > 31) {
    fail("{}: date {:04}-{:02}-{:02} cannot be represented (zero dates are not supported)", where, year, month, day);
  }
  const std::int64_t days =
      days_from_civil(static_cast<std::int32_t>(year), static_cast<unsigned>(month), static_cast<unsigned>(day));
  return ((days * 24 + hour) * 60 + minute) * 60 * kMicrosPerSecond + second * kMicrosPerSecond;
}

DateTime datetime2(ByteReader& reader, unsigned fsp, const std::string& where) {
  // 1 sign bit, 17 bits year*13+month, 5 day, 5 hour, 6 minute, 6 second; then the fraction.
  constexpr std::int64_t kIntOffset = 0x8000000000;
  const std::int64_t int_part = static_cast<std::int64_t>(reader.big_endian(5, "datetime")) - kIntOffset;
  const std::int64_t frac = fraction_micros(reader, fsp, FractionSign::kSigned);
  if (int_part < 0) fail("{}: negative DATETIME value", where);
  const std::int64_t ymd = int_part >> 17, hms = int_part % (1 << 17);
  const std::int64_t year_month = ymd >> 5;
  return DateTime{civil_micros(year_month / 13, year_month % 13, ymd % (1 << 5), hms >> 12, (hms >> 6) % (1 << 6),
                               hms % (1 << 6), where) +
                  frac};
}

Date date(ByteReader& reader, const std::string& where) {
  const std::uint64_t raw = reader.little_endian(3, "date");
  const std::int64_t day = raw & 31, month = (raw >> 5) & 15, year = raw >> 9;
  return Date{static_cast<std::int32_t>(civil_micros(year, month, day, 0, 0, 0, where) / (86400 * kMicrosPerSecond))};
}

std::string set_members(std::uint64_t bits, const Column& column, const std::string& where) {
  std::string out;
  for (std::size_t i = 0; i < 64 && bits != 0; ++i, bits >>= 1) {
    if ((bits & 1) == 0) continue;
    if (i >= column.symbols.size()) fail("{}: SET bit {} has no member (of {})", where, i, column.symbols.size());
    if (!out.empty()) out += ',';
    out += column.symbols[i];
  }
  return out;
}

}  // namespace

// CHAR, VARCHAR, BINARY, VARBINARY, the TEXT and BLOB types and GEOMETRY: length-prefixed bytes,
// text converted from the column's character set.
Value RowDecoder::decode_string(const ColumnLayout& layout, const Column& column, ByteReader& reader) {
  if (layout.type == bt::kBlob || layout.type == bt::kGeometry) {
    std::string_view bytes = reader.take(reader.little_endian(layout.length, "blob length"), "blob");
    if (layout.type == bt::kGeometry || layout.is_binary) return Bytes{std::string(bytes)};
    return Text{converter_.to_utf8(bytes, column.charset)};
  }
  const unsigned prefix = layout.length > 255 ? 2 : 1;
  std::string_view bytes = reader.take(reader.little_endian(prefix, "string length"), "string");
  if (layout.is_binary) {
    Bytes value{std::string(bytes)};
    // BINARY(n) is stored padded with 0x00 to n bytes; the binlog drops the padding.
    if (layout.type == bt::kString && value.data.size() < layout.length) value.data.resize(layout.length, '\0');
    return value;
  }
  return Text{converter_.to_utf8(bytes, column.charset)};
}

Value RowDecoder::decode_value(const TableMap& table, std::size_t index, ByteReader& reader, const std::string& where) {
  const ColumnLayout& layout = table.layout[index];
  const Column& column = table.schema->columns[index];
  switch (layout.type) {
    case bt::kTiny:
      return integer(reader, 1, column.is_unsigned);
    case bt::kShort:
      return integer(reader, 2, column.is_unsigned);
    case bt::kInt24:
      return integer(reader, 3, column.is_unsigned);
    case bt::kLong:
      return integer(reader, 4, column.is_unsigned);
    case bt::kLongLong:
      return integer(reader, 8, column.is_unsigned);
    case bt::kFloat:
      return std::bit_cast<float>(static_cast<std::uint32_t>(reader.little_endian(4, "float")));
    case bt::kDouble:
      return std::bit_cast<double>(reader.little_endian(8, "double"));
    case bt::kNewDecimal:
      return decimal(reader, layout.precision, layout.decimals);
    case bt::kBit:
      return std::uint64_t{reader.big_endian(layout.length, "bit")};
    case bt::kYear: {
      const std::uint8_t year = reader.u8("year");
      return std::int64_t{year == 0 ? 0 : 1900 + year};
    }
    case bt::kDate:
    case bt::kNewDate:
      return date(reader, where);
    case bt::kTime2:
      return time2(reader, layout.decimals);
    case bt::kDateTime2:
      return datetime2(reader, layout.decimals, where);
    case bt::kTimestamp2: {
      const auto seconds = static_cast<std::int64_t>(reader.big_endian(4, "timestamp"));
      return Timestamp{seconds * kMicrosPerSecond + fraction_micros(reader, layout.decimals, FractionSign::kUnsigned)};
    }
    case bt::kTimestamp:
      return Timestamp{static_cast<std::int64_t>(reader.little_endian(4, "timestamp")) * kMicrosPerSecond};
    case bt::kEnum: {
      const std::uint64_t ordinal = reader.little_endian(layout.length, "enum");
      if (ordinal == 0) return Text{};  // the empty string MySQL stores for an invalid ENUM value
      if (ordinal > column.symbols.size()) fail("{}: ENUM index {} of {}", where, ordinal, column.symbols.size());
      return Text{converter_.to_utf8(column.symbols[ordinal - 1], column.charset)};
    }
    case bt::kSet:
      return Text{
          converter_.to_utf8(set_members(reader.little_endian(layout.length, "set"), column, where), column.charset)};
    case bt::kString:
    case bt::kVarchar:
    case bt::kVarString:
    case bt::kBlob:
    case bt::kGeometry:
      return decode_string(layout, column, reader);
    default:
      fail("{}: column type {} (binlog type {}) is not supported", where, to_string(column.type), layout.type);
  }
}

RowImage RowDecoder::decode_image(const TableMap& table, std::string_view present, ByteReader& reader,
                                  const std::string& where) {
  const std::size_t count = table.layout.size();
  std::size_t present_count = 0;
  for (std::size_t i = 0; i < count; ++i) present_count += bit_set(present, i);
  if (present_count != count) {
    fail("{}: row image of {} holds {} of {} columns (binlog_row_image must be FULL)", where,
         table.schema->qualified_name(), present_count, count);
  }
  const std::string_view nulls = reader.take((present_count + 7) / 8, "null bitmap");
  RowImage image;
  image.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (bit_set(nulls, i)) {
      image.emplace_back(std::monostate{});
      continue;
    }
    const auto column_frame = [&] {
      const Column& column = table.schema->columns[i];
      return fmt::format("{}: {}.{} ({})", where, table.schema->qualified_name(), column.name, to_string(column.type));
    };
    image.push_back(with_context(column_frame, [&] { return decode_value(table, i, reader, where); }));
  }
  return image;
}

std::vector<DecodedRow> RowDecoder::decode(const TableMap& table, const RowsEventData& event,
                                           const std::string& where) {
  if (event.table_id != table.table_id) {
    fail("{}: rows event for table id {} decoded with the map of table id {}", where, event.table_id, table.table_id);
  }
  if (event.column_count != table.layout.size()) {
    fail("{}: rows event has {} columns, TABLE_MAP of {} has {}", where, event.column_count,
         table.schema->qualified_name(), table.layout.size());
  }
  const std::size_t bitmap_bytes = (event.column_count + 7) / 8;
  if (event.columns_before.size() < bitmap_bytes ||
      (event.kind == RowsKind::kUpdate && event.columns_after.size() < bitmap_bytes)) {
    fail("{}: column bitmap shorter than {} bytes", where, bitmap_bytes);
  }
  ByteReader reader(event.rows, where);
  std::vector<DecodedRow> rows;
  while (!reader.at_end()) {
    DecodedRow row;
    RowImage first = decode_image(table, event.columns_before, reader, where);
    switch (event.kind) {
      case RowsKind::kWrite:
        row.after = std::move(first);
        break;
      case RowsKind::kDelete:
        row.before = std::move(first);
        break;
      case RowsKind::kUpdate:
        row.before = std::move(first);
        row.after = decode_image(table, event.columns_after, reader, where);
        break;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace binberg::mysql
