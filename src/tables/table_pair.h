#pragma once

// The Iceberg tables of one captured source table, as path A (the Replicator) and path B's sink
// keep them: `T`, the current state (keyed upsert; none without a primary key), and
// `T<changelog_suffix>`, the append-only history. The source definition the tables were made from
// is recorded in their kSourceSchemaProperty.

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/change_event.h"
#include "core/table_schema.h"
#include "iceberg/catalog.h"
#include "iceberg/table_writer.h"
#include "mysql/ddl_statement.h"
#include "tables/snapshot_properties.h"
#include "tables/table_mapping.h"

namespace binberg::tables {

struct TablePair {
  iceberg::TableIdentifier state_id, changelog_id;
  // The source definition the tables hold: recorded in them, else NOW for tables made here.
  std::shared_ptr<const TableSchema> schema;
  std::optional<iceberg::LoadedTable> state;  // none without a primary key
  std::optional<iceberg::LoadedTable> changelog;
};

// The source definition TABLE records (kSourceSchemaProperty); null when it records none.
std::shared_ptr<const TableSchema> recorded_source_schema(const iceberg::LoadedTable& table);

// Loads the tables of source table TABLE in namespace NS (created when missing), creating the
// tables that are missing for NOW, the source table as it is, with the types TYPES gives.
// PROPERTIES go to created tables besides the source definition. Throws UnmappableTable (and
// creates nothing) when a table to create cannot be made.
TablePair open_table_pair(iceberg::Catalog& catalog, const std::string& ns, const std::string& table,
                          const std::string& changelog_suffix, const std::shared_ptr<const TableSchema>& now,
                          const TypeMapping& types, const std::map<std::string, std::string>& properties = {});

// Whether a schema change is applied because the policy allows it or because the operator accepted
// it (--accept-schema-change).
enum class Acceptance { kByPolicy, kByOperator };

// What a schema change did to a pair of tables.
struct EvolvedTables {
  std::shared_ptr<const TableSchema> source;  // the source definition the tables hold now
  bool changed = false;                       // false: the Iceberg schemas stay as they were
  std::size_t filled_rows = 0;                // current-state rows given the added columns' values
};

// Applies the ALTER TABLE STATEMENT to the tables of BEFORE, the source definition they hold, by
// the policy of schema_change.h; NOW is the source table as the server describes it now (where
// added and modified columns' definitions are read from). The writers must hold no pending
// changes: the evolved schemas, the recorded source definition and the rows given added columns'
// values all become visible with their next commit, together. Columns it adds get the types
// TYPES gives. Throws SchemaChangeRefused (also for column names the changelog's own columns take
// and for added or changed columns without an exact type).
EvolvedTables evolve_tables(const mysql::DdlStatement& statement, const TableSchema& before, const TableSchema& now,
                            Acceptance acceptance, const TypeMapping& types, iceberg::TableWriter* state,
                            iceberg::TableWriter& changelog);

// Applies one change event: the current state (upsert, delete, or both for an update of the
// primary key) when there is a STATE writer, and a changelog row.
void apply_change(const RowMapping& mapping, const ChangeEvent& event, iceberg::TableWriter* state,
                  iceberg::TableWriter& changelog);

}  // namespace binberg::tables
