#pragma once

// How a captured source table becomes Iceberg tables: the current-state table's schema (source
// columns, primary key as identifier fields) and the conversion of source values to Iceberg
// values. Every mapping is exact; a source type with no exact Iceberg type is refused with an
// error naming the column, never coerced.
//
//   TINYINT..MEDIUMINT (signed or not), INT, YEAR   int      (INT UNSIGNED: long)
//   BIGINT                                          long     (BIGINT UNSIGNED: decimal(20,0))
//   BIT(n)                                          long     (BIT(64): decimal(20,0))
//   FLOAT, DOUBLE                                   float, double
//   DECIMAL(p,s), p <= 38                           decimal(p,s)
//   DATE                                            date
//   TIME (a signed duration up to 838 h)            long, microseconds
//   DATETIME                                        timestamp (microseconds, no zone)
//   TIMESTAMP                                       timestamptz (microseconds, UTC)
//   CHAR, VARCHAR, TEXT, ENUM, SET, JSON            string
//   BINARY, VARBINARY, BLOB, GEOMETRY               binary

#include <vector>

#include "core/change_event.h"
#include "core/table_schema.h"
#include "core/value.h"
#include "iceberg/arrow_rows.h"
#include "iceberg/schema.h"

namespace binberg::pipeline {

// The Iceberg type of COLUMN; throws ConfigError naming TABLE.COLUMN when none is exact.
iceberg::TypePtr iceberg_type(const TableSchema& table, const Column& column);

// Field ids 1..n in column order; the primary key columns are the identifier fields (and
// required). Throws ConfigError for unsupported columns.
iceberg::Schema current_state_schema(const TableSchema& table);

// VALUE of COLUMN as the alternative of TYPE. Throws Error naming the column on a mismatch.
iceberg::Literal to_literal(const Column& column, const iceberg::Type& type, const Value& value);

// IMAGE (one value per source column) as a row of SCHEMA, whose first fields are the columns.
iceberg::Row to_row(const TableSchema& table, const iceberg::Schema& schema, const RowImage& image);

// The changelog table (append-only history, one row per change event):
//   _event_id string (required), _op string (required: r, c, u, d), _gtid string,
//   _binlog_file string, _binlog_pos long, _row_index int, _commit_ts timestamptz,
//   then every source column holding the after image, then _before_<column> for each column
//   holding the before image. Throws ConfigError when a source column name collides.
iceberg::Schema changelog_schema(const TableSchema& table);
inline constexpr std::size_t kChangelogMetadataColumns = 7;
iceberg::Row changelog_row(const iceberg::Schema& schema, const ChangeEvent& event);

// True when the current-state table SCHEMA holds exactly the columns TABLE maps to (names, types,
// required-ness, identifier fields), so rows of TABLE can be written to it as they are.
bool schema_matches(const iceberg::Schema& schema, const iceberg::Schema& mapped);

}  // namespace binberg::pipeline
