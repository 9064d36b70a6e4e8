#pragma once

// Schema evolution from DDL: how an ALTER TABLE on a captured table changes its Iceberg tables.
//
// The policy (docs/schema-evolution.md), chosen so the Iceberg tables stay equal to the source and
// the changelog keeps every bit of history:
//   ADD COLUMN     a new optional field with a fresh id in both tables. The rows that already
//                  exist get the value the source gave them: NULL, a constant DEFAULT, or the
//                  type's implicit default (NOT NULL without DEFAULT) — written to every existing
//                  row of the current-state table in the same commit. A DEFAULT that is an
//                  expression, AUTO_INCREMENT, or a generated column is refused: binberg cannot
//                  know the values the source computed.
//   MODIFY/CHANGE  allowed when the new definition holds every value of the old one exactly
//                  (wider integer, FLOAT->DOUBLE, more DECIMAL digits, longer string or binary of
//                  the same charset, more fractional digits, appended ENUM/SET values, NOT NULL ->
//                  NULL); the Iceberg field is promoted where Iceberg allows (int->long,
//                  float->double, wider decimal). Anything else may have rewritten stored rows
//                  without a row event and is refused.
//   RENAME COLUMN  renamed in both tables; the field id stays, so history keeps its values.
//   DROP COLUMN    removed from the current-state table; the changelog keeps the column (null from
//                  then on). Primary-key columns cannot be dropped.
//   Index and table options: no effect. Primary-key changes, table renames, and clauses binberg
//   does not understand are refused.
// A refused change stops replication before the statement, so nothing after it is written. An
// operator who knows a refused MODIFY did not rewrite rows (strict SQL mode refuses lossy ALTERs)
// accepts it with `binberg replicate --accept-schema-change GTID`: the Iceberg field keeps its
// type when the new values fit in it, and reconcile then proves the rows equal.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/table_schema.h"
#include "core/value.h"
#include "iceberg/schema.h"
#include "mysql/ddl_statement.h"
#include "tables/snapshot_properties.h"
#include "tables/table_mapping.h"

namespace binberg::tables {

// A schema change binberg will not apply by itself; the message names the table, the clause and why.
class SchemaChangeRefused : public Error {
 public:
  using Error::Error;
};

// Why a statement on a captured table that is not an ALTER TABLE is refused.
inline constexpr const char* kNotAnAlterTable =
    "it drops, renames, truncates or re-creates a captured table, which binberg does not replicate; stop capturing "
    "the table or start it afresh";

struct SchemaChangePlan {
  std::shared_ptr<const TableSchema> source;  // the source table after the statement
  std::optional<iceberg::Schema> state;       // next current-state schema; nullopt without a primary key
  iceberg::Schema changelog{0, {}};
  // Columns added with a non-null value for existing rows, which the current-state table's rows get.
  std::vector<std::pair<std::string, Value>> existing_rows;
  bool changes_tables = false;  // false: the Iceberg schemas stay as they are
};

struct SchemaChangeInput {
  const mysql::DdlStatement* statement = nullptr;  // an ALTER TABLE of the table
  const TableSchema* before = nullptr;             // the source table the Iceberg tables hold
  // The source table as the server describes it now, where added and modified columns' definitions
  // are read from (a later statement may have changed it further: only the named columns are used).
  const TableSchema* now = nullptr;
  const iceberg::Schema* state = nullptr;  // null without a primary key
  std::int32_t state_last_column_id = 0;
  const iceberg::Schema* changelog = nullptr;
  std::int32_t changelog_last_column_id = 0;
  bool accepted = false;  // the operator accepted this statement (--accept-schema-change)
  TypeMapping types;      // for added columns; existing ones keep the mapping their fields hold
};

// Throws SchemaChangeRefused when the policy refuses the statement, UnmappableTable when a column
// it adds or changes has no exact Iceberg type under input.types or a name the changelog takes.
SchemaChangePlan plan_schema_change(const SchemaChangeInput& input);

// Why changing column OLD into NEW could alter stored values, or nullopt when every value of OLD
// is a value of NEW (the MODIFY policy above).
std::optional<std::string> lossy_change(const Column& old_column, const Column& new_column);

// The value an ADD COLUMN with EXISTING_ROWS gave the rows TABLE already had in COLUMN, or nullopt
// for NULL; throws SchemaChangeRefused when binberg cannot know it (an expression, ...).
std::optional<Value> existing_rows_value(const TableSchema& table, const Column& column,
                                         const mysql::ExistingRowsValue& existing_rows);

// The source definition as recorded in kSourceSchemaProperty (snapshot_properties.h).
nlohmann::json table_schema_to_json(const TableSchema& schema);
std::shared_ptr<const TableSchema> table_schema_from_json(const nlohmann::json& json);

// Path B: what binberg source publishes of a DDL statement naming a captured table, as the JSON of
// envelope::kSchemaChangeHeader. With it a sink applies the statement as path A does, at its place
// in the stream: the source's definition of the columns the statement names is read when the
// source meets it, since the sink cannot ask the source.
struct PublishedSchemaChange {
  std::string database;   // the statement's default database
  std::string statement;  // as the source logged it
  // The table as the source server described it when binberg source read the statement (null:
  // the server no longer had it).
  std::shared_ptr<const TableSchema> now;

  std::string to_json() const;
  // Throws Error naming what is wrong.
  static PublishedSchemaChange parse(const std::string& text);
};

}  // namespace binberg::tables
