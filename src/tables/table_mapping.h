#pragma once

// How a captured source table becomes Iceberg tables: the current-state table's schema (source
// columns, primary key as identifier fields) and the conversion of source values to Iceberg
// values. Every mapping is exact; a source type with no exact Iceberg type is never coerced: the
// table is refused (UnmappableTable) unless [types] chose an exact alternative.
//
//   TINYINT..MEDIUMINT (signed or not), INT, YEAR   int      (INT UNSIGNED: long)
//   BIGINT                                          long     (BIGINT UNSIGNED: decimal(20,0))
//   BIT(n)                                          long     (BIT(64): decimal(20,0))
//   FLOAT, DOUBLE                                   float, double (not in a primary key)
//   DECIMAL(p,s), p <= 38                           decimal(p,s)
//   DECIMAL(p,s), p > 38                            refused; [types] wide_decimal = "string":
//                                                   string, the exact canonical text ("-1.50")
//   DATE                                            date
//   TIME (a signed duration up to 838 h)            long, microseconds
//   DATETIME                                        timestamp (microseconds, no zone)
//   TIMESTAMP                                       timestamptz (microseconds, UTC)
//   CHAR, VARCHAR, TEXT, ENUM, SET, JSON            string
//   BINARY, VARBINARY, BLOB, GEOMETRY               binary
//
// A table keeps the types it was created with: a row mapping (RowMapping) and a schema change take
// a string field of a DECIMAL column as the text mapping whatever [types] says now.

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/change_event.h"
#include "core/error.h"
#include "core/table_schema.h"
#include "core/value.h"
#include "iceberg/arrow_rows.h"
#include "iceberg/schema.h"

namespace binberg::tables {

// What binberg does with a DECIMAL wider than Iceberg's 38 digits ([types] wide_decimal).
enum class WideDecimal {
  kRefuse,  // the table stops alone (UnmappableTable)
  kString,  // an Iceberg string holding the exact canonical decimal text
};

// The choices of [types] (docs/configuration.md) for source types with no exact Iceberg type.
struct TypeMapping {
  WideDecimal wide_decimal = WideDecimal::kRefuse;
};

// A source table binberg cannot map onto Iceberg tables. The message names the table, the column,
// its type, why, and what the operator can change. Only that table stops: path A's Replicator
// creates none of its tables, path B's sink stops writing it; the others go on.
class UnmappableTable : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// The Iceberg type of COLUMN under TYPES; throws UnmappableTable naming TABLE.COLUMN when none is exact.
iceberg::TypePtr iceberg_type(const TableSchema& table, const Column& column, const TypeMapping& types);

// The mapping an Iceberg FIELD_TYPE made for COLUMN holds: TYPES, except that a DECIMAL held in a
// string field is held as text. A table keeps its types whatever [types] says later.
TypeMapping mapping_held(const Column& column, const iceberg::Type& field_type, const TypeMapping& types);

// Throws UnmappableTable when TABLE's Iceberg tables cannot be made under TYPES: a column without
// an exact type, a floating-point primary-key column, a column name the changelog takes.
void check_mappable(const TableSchema& table, const TypeMapping& types);

// Field ids 1..n in column order; the primary key columns are the identifier fields (and
// required). Throws UnmappableTable for columns without an exact type and floating-point keys.
iceberg::Schema current_state_schema(const TableSchema& table, const TypeMapping& types);

// VALUE of COLUMN as the alternative of TYPE, which is COLUMN's Iceberg type or one Iceberg
// promotes it to (a DECIMAL as string: its canonical text). Throws Error naming the column on a
// mismatch.
iceberg::Literal to_literal(const Column& column, const iceberg::Type& type, const Value& value);

// The changelog table (append-only history, one row per change event):
//   _event_id string (required), _op string (required: r, c, u, d), _gtid string,
//   _binlog_file string, _binlog_pos long, _row_index int, _commit_ts timestamptz,
//   then every source column holding the after image, then _before_<column> for each column
//   holding the before image. Throws UnmappableTable when a source column name collides
//   (check_changelog_names) or a column has no exact type.
// Schema evolution may later add, rename and reorder columns; a column dropped at the source stays
// (null from then on) so the history keeps it.
iceberg::Schema changelog_schema(const TableSchema& table, const TypeMapping& types);
// Throws UnmappableTable when a column of TABLE is named like one of the changelog's own columns.
void check_changelog_names(const TableSchema& table);
inline constexpr std::size_t kChangelogMetadataColumns = 7;
inline constexpr std::string_view kBeforeImagePrefix = "_before_";

// How the row images of one source schema become rows of a table's Iceberg tables. Columns match
// by name, so field ids stay with their columns across renames, reorders and added columns. The
// constructor checks what makes every write exact and throws Error naming the column otherwise:
//   - every source column has a field (state, changelog after and before image) whose type is
//     the column's Iceberg type (under the mapping the field holds, mapping_held) or one Iceberg
//     promotes it to (int->long, float->double, wider decimal), required only if the column is
//     NOT NULL;
//   - every current-state field is a source column, and its identifier fields are the source's
//     primary key in key order.
// Changelog fields of columns the source no longer has are written as null.
class RowMapping {
 public:
  // STATE and CHANGELOG may be null when there is no such table (keyless tables, reconcile).
  RowMapping(std::shared_ptr<const TableSchema> source, const iceberg::Schema* state, const iceberg::Schema* changelog);

  const TableSchema& source() const { return *source_; }
  iceberg::Row state_row(const RowImage& image) const;
  iceberg::Row changelog_row(const ChangeEvent& event) const;

 private:
  struct Slot {
    std::size_t column;  // index into the source image
    iceberg::TypePtr type;
  };
  // One per field; nullopt for a changelog field no source column feeds.
  using Slots = std::vector<std::optional<Slot>>;
  Slot checked_slot(const iceberg::NestedField& field, std::size_t column, const char* which) const;
  void map_state(const iceberg::Schema& state);
  void map_changelog(const iceberg::Schema& changelog);
  void check_image(const RowImage& image) const;

  std::shared_ptr<const TableSchema> source_;
  Slots state_;
  Slots changelog_after_, changelog_before_;  // by changelog field; metadata fields empty
};

}  // namespace binberg::tables
