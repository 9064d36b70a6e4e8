#pragma once

// Decodes the row images of WRITE/UPDATE/DELETE rows events (v1 and v2) into typed values, from
// the TABLE_MAP's types and metadata. The library's own extraction is broken for CHAR/ENUM and
// ignores column bitmaps, so binberg reads the documented row format itself:
//   per row: a null bitmap over the columns present in the event's column bitmap, then the
//   values of the present, non-null columns in column order; UPDATE rows are (before, after)
//   pairs, the after image using the update bitmap.
// Anything it cannot decode exactly stops with an Error naming table, column, type and position.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/change_event.h"
#include "mysql/charset.h"
#include "mysql/table_map.h"

namespace binberg::mysql {

enum class RowsKind { kWrite, kUpdate, kDelete };

struct RowsEventData {
  RowsKind kind = RowsKind::kWrite;
  std::uint64_t table_id = 0;
  std::uint32_t column_count = 0;
  std::string columns_before;  // bitmap of columns present in the (before) image
  std::string columns_after;   // UPDATE only: bitmap of columns present in the after image
  std::string rows;
};

struct DecodedRow {
  std::optional<RowImage> before;
  std::optional<RowImage> after;
};

class RowDecoder {
 public:
  // WHERE names the event's binlog position in errors.
  std::vector<DecodedRow> decode(const TableMap& table, const RowsEventData& event, const std::string& where);

 private:
  RowImage decode_image(const TableMap& table, std::string_view present, class ByteReader& reader,
                        const std::string& where);
  Value decode_value(const TableMap& table, std::size_t column, class ByteReader& reader, const std::string& where);
  Value decode_string(const ColumnLayout& layout, const Column& column, class ByteReader& reader);

  Utf8Converter converter_;
};

}  // namespace binberg::mysql
