#pragma once

// What `binberg source` learns from a table's DDL that the table's definition no longer says and
// the Avro schemas of its records need (envelope::ColumnHistory): for each NOT NULL column added
// by DDL, the value the rows written before it hold (the field's default); for each renamed
// column, its earlier names (the field's aliases). With both, a registry's BACKWARD check passes
// for ADD COLUMN ... NOT NULL DEFAULT and for RENAME COLUMN, and a reader of the new schema reads
// the older records as the table holds those rows now. The source saves them with its positions,
// so a restart registers the same schemas.

#include <map>
#include <string>
#include <vector>

#include "core/table_schema.h"
#include "envelope/change_envelope.h"
#include "mysql/ddl_statement.h"

namespace binberg::publish {

// Keyed by column name in any case (same_column_name); earlier names are spelled as the records
// that carry them spell them.
struct LearnedColumns {
  std::map<std::string, mysql::ExistingRowsValue, ColumnNameLess> defaults;       // by NOT NULL column added by DDL
  std::map<std::string, std::vector<std::string>, ColumnNameLess> earlier_names;  // by renamed column, newest first

  bool empty() const { return defaults.empty() && earlier_names.empty(); }
  bool operator==(const LearnedColumns&) const = default;

  // Learns from the ALTER TABLE statement DDL, in the order of its clauses. REGISTERED is the
  // table as its records describe it before the statement (null when none were produced yet).
  void learn(const mysql::DdlStatement& ddl, const TableSchema* registered);

  // The history of TABLE's columns for envelope_schemas. A learned default binberg cannot turn into
  // a value of its column is left out (and logged): the registry then judges without it.
  envelope::ColumnHistory history(const TableSchema& table) const;
};

}  // namespace binberg::publish
