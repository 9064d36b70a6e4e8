#pragma once

// The canonical, typed, byte-exact encoding of rows that reconciliation hashes. Two rows encode
// to the same bytes iff they have the same column names and the same typed values: 1 (INT) and
// 1 (BIGINT UNSIGNED) differ, as do 'a' as text and 'a' as bytes. NaN is canonicalized; -0.0 is
// kept distinct from 0.0. Layout (big-endian integers):
//   row   := u32 column_count, column*
//   column:= u32 name_length, name, u8 kind (Value's alternative index), payload
// payload: none (null); 8 bytes (int64, uint64, double, time, datetime, timestamp); 4 bytes
// (float, date); u32 length + bytes (decimal digits, text UTF-8, bytes).

#include <string>
#include <string_view>

#include "core/change_event.h"

namespace binberg {

void append_canonical_value(std::string& out, const Value& value);
std::string canonical_row(const TableSchema& schema, const RowImage& image);

// Lowercase hex SHA-256 of DATA.
std::string sha256_hex(std::string_view data);

}  // namespace binberg
