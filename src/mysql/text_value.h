#pragma once

// Typed values from the text protocol (SELECT results), equal to what the row decoder produces
// from the binlog for the same row. The snapshot reads rows this way; select_expression() gives
// the column expressions that make the text exact (FLOAT as DOUBLE, BIT as an integer, TIMESTAMP
// in UTC with the session time zone at +00:00).

#include <optional>
#include <string>
#include <string_view>

#include "core/table_schema.h"
#include "core/value.h"

namespace binberg::mysql {

// SELECT expression for COLUMN: exact text for every type.
std::string select_expression(const Column& column);
// The select expressions of every column of SCHEMA, in order, comma-separated.
std::string select_list(const TableSchema& schema);

// Parses the text of COLUMN's value (nullopt: SQL NULL); throws Error naming the column.
Value parse_text_value(const Column& column, const std::optional<std::string>& text);

// Quotes an identifier with backticks.
std::string quote_identifier(std::string_view name);

}  // namespace binberg::mysql
