#include "mysql/table_map.h"

#include <optional>

#include "core/error.h"
#include "mysql/byte_reader.h"

namespace binberg::mysql {
namespace {

namespace bt = binlog_type;

// Optional metadata field types (MySQL Table_map_log_event::Optional_metadata_field_type).
enum MetadataField : std::uint8_t {
  kSignedness = 1,
  kDefaultCharset = 2,
  kColumnCharset = 3,
  kColumnName = 4,
  kSetStrValue = 5,
  kEnumStrValue = 6,
  kGeometryType = 7,
  kSimplePrimaryKey = 8,
  kPrimaryKeyWithPrefix = 9,
  kEnumAndSetDefaultCharset = 10,
  kEnumAndSetColumnCharset = 11,
};

bool is_numeric(std::uint8_t type) {
  switch (type) {
    case bt::kTiny:
    case bt::kShort:
    case bt::kInt24:
    case bt::kLong:
    case bt::kLongLong:
    case bt::kFloat:
    case bt::kDouble:
    case bt::kNewDecimal:
    case bt::kDecimal:
      return true;
    default:
      return false;
  }
}

bool is_enum_or_set(std::uint8_t real_type) { return real_type == bt::kEnum || real_type == bt::kSet; }

// Columns whose charset COLUMN_CHARSET/DEFAULT_CHARSET describe (ENUM/SET have their own fields).
// MariaDB counts GEOMETRY among them (charset binary); a mismatch is reported, never guessed.
bool is_character(std::uint8_t real_type) {
  switch (real_type) {
    case bt::kGeometry:
    case bt::kString:
    case bt::kVarchar:
    case bt::kVarString:
    case bt::kBlob:
    case bt::kTinyBlob:
    case bt::kMediumBlob:
    case bt::kLongBlob:
      return true;
    default:
      return false;
  }
}

// Reads the per-column metadata block into layouts, resolving STRING's real type.
std::vector<ColumnLayout> read_layouts(const TableMapEventData& event, const std::string& where) {
  ByteReader meta(event.column_metadata, where + " column metadata");
  std::vector<ColumnLayout> layouts;
  for (unsigned char raw_type : event.column_types) {
    ColumnLayout layout;
    layout.type = raw_type;
    switch (raw_type) {
      case bt::kFloat:
      case bt::kDouble:
        meta.u8("float size");
        break;
      case bt::kBlob:
      case bt::kGeometry:
      case bt::kJson:
        layout.length = meta.u8("blob length bytes");
        break;
      case bt::kVarchar:
      case bt::kVarString:
        layout.length = static_cast<std::uint32_t>(meta.little_endian(2, "varchar max length"));
        break;
      case bt::kBit: {
        const std::uint32_t bits = meta.u8("bit remainder");
        const std::uint32_t bytes = meta.u8("bit bytes");
        layout.precision = static_cast<std::uint8_t>(bytes * 8 + bits);
        layout.length = bytes + (bits > 0 ? 1 : 0);
        break;
      }
      case bt::kNewDecimal:
        layout.precision = meta.u8("decimal precision");
        layout.decimals = meta.u8("decimal scale");
        break;
      case bt::kString:
      case bt::kEnum:
      case bt::kSet: {
        const std::uint8_t first = meta.u8("string real type");
        const std::uint8_t second = meta.u8("string length");
        if ((first & 0x30) != 0x30) {
          // CHAR longer than 255 bytes: two length bits are folded into the type byte.
          layout.type = static_cast<std::uint8_t>(first | 0x30);
          layout.length = second | (static_cast<std::uint32_t>((first & 0x30) ^ 0x30) << 4);
        } else {
          layout.type = first;
          layout.length = second;
        }
        break;
      }
      case bt::kTime2:
      case bt::kDateTime2:
      case bt::kTimestamp2:
        layout.decimals = meta.u8("fractional seconds");
        break;
      default:
        break;
    }
    layouts.push_back(layout);
  }
  if (!meta.at_end()) fail("{}: {} unread bytes of column metadata", where, meta.remaining());
  return layouts;
}

std::vector<std::string> read_strings(ByteReader& field, const char* what) {
  std::vector<std::string> out;
  while (!field.at_end()) out.emplace_back(field.packed_string(what));
  return out;
}

std::vector<std::vector<std::string>> read_symbol_lists(ByteReader& field, const char* what) {
  std::vector<std::vector<std::string>> out;
  while (!field.at_end()) {
    std::vector<std::string> symbols(field.packed(what));
    for (auto& symbol : symbols) symbol = field.packed_string(what);
    out.push_back(std::move(symbols));
  }
  return out;
}

std::vector<std::uint32_t> read_packed_list(ByteReader& field, const char* what) {
  std::vector<std::uint32_t> out;
  while (!field.at_end()) out.push_back(static_cast<std::uint32_t>(field.packed(what)));
  return out;
}

// DEFAULT_CHARSET: the default collation, then (column index, collation) for the exceptions,
// where the index counts only the columns the field covers.
std::vector<std::uint32_t> read_default_charsets(ByteReader& field, std::size_t covered, const char* what) {
  const auto default_collation = static_cast<std::uint32_t>(field.packed(what));
  std::vector<std::uint32_t> collations(covered, default_collation);
  while (!field.at_end()) {
    const auto index = field.packed(what);
    const auto collation = static_cast<std::uint32_t>(field.packed(what));
    if (index >= covered) fail("{}: {} names column {} of {}", field.context(), what, index, covered);
    collations[index] = collation;
  }
  return collations;
}

struct OptionalMetadata {
  std::optional<std::string> signedness;
  std::vector<std::uint32_t> charsets;           // per character column
  std::vector<std::uint32_t> enum_set_charsets;  // per ENUM/SET column
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> enum_values;
  std::vector<std::vector<std::string>> set_values;
  std::vector<std::uint32_t> primary_key;
};

OptionalMetadata read_optional_metadata(const TableMapEventData& event, const std::vector<ColumnLayout>& layouts,
                                        const std::string& where) {
  std::size_t character_columns = 0, enum_set_columns = 0;
  for (const auto& layout : layouts) {
    if (is_character(layout.type)) ++character_columns;
    if (is_enum_or_set(layout.type)) ++enum_set_columns;
  }
  OptionalMetadata result;
  ByteReader reader(event.optional_metadata, where + " optional metadata");
  while (!reader.at_end()) {
    const std::uint8_t type = reader.u8("field type");
    ByteReader field(reader.packed_string("field"), where + " optional metadata field " + std::to_string(type));
    switch (type) {
      case kSignedness:
        result.signedness = std::string(field.take(field.remaining(), "signedness"));
        break;
      case kDefaultCharset:
        result.charsets = read_default_charsets(field, character_columns, "default charset");
        break;
      case kColumnCharset:
        result.charsets = read_packed_list(field, "column charset");
        break;
      case kColumnName:
        result.names = read_strings(field, "column name");
        break;
      case kSetStrValue:
        result.set_values = read_symbol_lists(field, "set value");
        break;
      case kEnumStrValue:
        result.enum_values = read_symbol_lists(field, "enum value");
        break;
      case kSimplePrimaryKey:
        result.primary_key = read_packed_list(field, "primary key column");
        break;
      case kPrimaryKeyWithPrefix:
        // A key on a column prefix still identifies rows by the whole column's value.
        while (!field.at_end()) {
          result.primary_key.push_back(static_cast<std::uint32_t>(field.packed("primary key column")));
          field.packed("primary key prefix");
        }
        break;
      case kEnumAndSetDefaultCharset:
        result.enum_set_charsets = read_default_charsets(field, enum_set_columns, "enum/set default charset");
        break;
      case kEnumAndSetColumnCharset:
        result.enum_set_charsets = read_packed_list(field, "enum/set column charset");
        break;
      default:
        break;  // GEOMETRY_TYPE, COLUMN_VISIBILITY and future fields do not change decoding
    }
  }
  if (result.charsets.size() != character_columns) {
    fail("{}: charsets for {} of {} character columns (binlog_row_metadata must be FULL)", where,
         result.charsets.size(), character_columns);
  }
  if (result.enum_set_charsets.size() != enum_set_columns) {
    fail("{}: charsets for {} of {} ENUM/SET columns (binlog_row_metadata must be FULL)", where,
         result.enum_set_charsets.size(), enum_set_columns);
  }
  return result;
}

SourceType source_type(const ColumnLayout& layout, bool binary, const std::string& where) {
  switch (layout.type) {
    case bt::kTiny:
      return SourceType::kTinyInt;
    case bt::kShort:
      return SourceType::kSmallInt;
    case bt::kInt24:
      return SourceType::kMediumInt;
    case bt::kLong:
      return SourceType::kInt;
    case bt::kLongLong:
      return SourceType::kBigInt;
    case bt::kFloat:
      return SourceType::kFloat;
    case bt::kDouble:
      return SourceType::kDouble;
    case bt::kNewDecimal:
      return SourceType::kDecimal;
    case bt::kBit:
      return SourceType::kBit;
    case bt::kYear:
      return SourceType::kYear;
    case bt::kDate:
    case bt::kNewDate:
      return SourceType::kDate;
    case bt::kTime:
    case bt::kTime2:
      return SourceType::kTime;
    case bt::kDateTime:
    case bt::kDateTime2:
      return SourceType::kDateTime;
    case bt::kTimestamp:
    case bt::kTimestamp2:
      return SourceType::kTimestamp;
    case bt::kString:
      return binary ? SourceType::kBinary : SourceType::kChar;
    case bt::kVarchar:
    case bt::kVarString:
      return binary ? SourceType::kVarbinary : SourceType::kVarchar;
    case bt::kBlob:
    case bt::kTinyBlob:
    case bt::kMediumBlob:
    case bt::kLongBlob:
      return binary ? SourceType::kBlob : SourceType::kText;
    case bt::kEnum:
      return SourceType::kEnum;
    case bt::kSet:
      return SourceType::kSet;
    case bt::kJson:
      return SourceType::kJson;
    case bt::kGeometry:
      return SourceType::kGeometry;
    default:
      fail("{}: binlog column type {} is not supported", where, layout.type);
  }
}

}  // namespace

TableMap parse_table_map(const TableMapEventData& event, const CharsetNames& charsets) {
  const std::string where = fmt::format("TABLE_MAP {}.{} (table id {})", event.database, event.table, event.table_id);
  const std::size_t count = event.column_types.size();
  if (event.null_bitmap.size() != (count + 7) / 8) {
    fail("{}: null bitmap has {} bytes for {} columns", where, event.null_bitmap.size(), count);
  }
  auto layouts = read_layouts(event, where);
  auto metadata = read_optional_metadata(event, layouts, where);
  if (metadata.names.size() != count) {
    fail("{}: column names for {} of {} columns (set binlog_row_metadata=FULL on the source)", where,
         metadata.names.size(), count);
  }

  auto schema = std::make_shared<TableSchema>();
  schema->database = event.database;
  schema->table = event.table;
  std::size_t numeric = 0, character = 0, enum_set = 0, enums = 0, sets = 0;
  for (std::size_t i = 0; i < count; ++i) {
    ColumnLayout& layout = layouts[i];
    Column column;
    column.name = metadata.names[i];
    column.nullable = bit_set(event.null_bitmap, i);
    const std::string column_where = fmt::format("{} column {}", where, column.name);
    if (is_numeric(layout.type)) {
      if (!metadata.signedness) fail("{}: no signedness metadata (binlog_row_metadata must be FULL)", column_where);
      const std::size_t byte = numeric / 8;
      if (byte >= metadata.signedness->size()) fail("{}: signedness bitmap too short", column_where);
      // Signedness bits run from the most significant bit of each byte.
      column.is_unsigned = (static_cast<std::uint8_t>((*metadata.signedness)[byte]) >> (7 - numeric % 8)) & 1;
      ++numeric;
    }
    if (is_character(layout.type)) {
      column.charset = charsets.charset_of(metadata.charsets[character++]);
      layout.is_binary = column.charset == "binary";
    } else if (is_enum_or_set(layout.type)) {
      column.charset = charsets.charset_of(metadata.enum_set_charsets[enum_set++]);
      auto& lists = layout.type == bt::kEnum ? metadata.enum_values : metadata.set_values;
      std::size_t& next = layout.type == bt::kEnum ? enums : sets;
      if (next >= lists.size()) fail("{}: no ENUM/SET values (binlog_row_metadata must be FULL)", column_where);
      column.symbols = lists[next++];
    }
    column.type = source_type(layout, layout.is_binary, column_where);
    switch (column.type) {
      case SourceType::kDecimal:
        column.precision = layout.precision;
        column.scale = layout.decimals;
        break;
      case SourceType::kBit:
        column.precision = layout.precision;
        break;
      case SourceType::kTime:
      case SourceType::kDateTime:
      case SourceType::kTimestamp:
        column.precision = layout.decimals;
        break;
      default:
        column.max_bytes = layout.length;
        break;
    }
    schema->columns.push_back(std::move(column));
  }
  for (std::uint32_t index : metadata.primary_key) {
    if (index >= count) fail("{}: primary key names column {} of {}", where, index, count);
    schema->primary_key.push_back(index);
  }
  return TableMap{event.table_id, std::move(schema), std::move(layouts)};
}

}  // namespace binberg::mysql
