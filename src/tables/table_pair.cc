#include "tables/table_pair.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/error.h"
#include "iceberg/table_scan.h"
#include "tables/schema_change.h"

namespace binberg::tables {

std::shared_ptr<const TableSchema> recorded_source_schema(const iceberg::LoadedTable& table) {
  const auto& properties = table.metadata.properties;
  const auto it = properties.find(kSourceSchemaProperty);
  if (it == properties.end()) return nullptr;
  try {
    return table_schema_from_json(nlohmann::json::parse(it->second));
  } catch (const std::exception& error) {
    fail("table {}: property {}: {}", table.id.to_string(), kSourceSchemaProperty, error.what());
  }
}

TablePair open_table_pair(iceberg::Catalog& catalog, const std::string& ns, const std::string& table,
                          const std::string& changelog_suffix, const std::shared_ptr<const TableSchema>& now,
                          const TypeMapping& types, const std::map<std::string, std::string>& properties) {
  if (auto namespaces = catalog.list_namespaces();
      std::find(namespaces.begin(), namespaces.end(), ns) == namespaces.end()) {
    try {
      catalog.create_namespace(ns);
    } catch (const iceberg::AlreadyExists&) {  // another writer (a sink sharing the group) made it meanwhile
    }
  }
  TablePair pair;
  pair.state_id = iceberg::TableIdentifier{ns, table};
  pair.changelog_id = iceberg::TableIdentifier{ns, table + changelog_suffix};
  const auto load = [&](const iceberg::TableIdentifier& id) -> std::optional<iceberg::LoadedTable> {
    try {
      return catalog.load_table(id);
    } catch (const iceberg::NoSuchTable&) {
      return std::nullopt;
    }
  };
  // Existing tables say what they hold; new ones are made for the source table as it is now.
  pair.changelog = load(pair.changelog_id);
  pair.schema = now;
  if (pair.changelog) {
    // Without the property, the tables were written before binberg recorded it: they must match the source as it is.
    if (auto recorded = recorded_source_schema(*pair.changelog)) pair.schema = std::move(recorded);
  }
  const bool keyed = !pair.schema->primary_key.empty();
  if (keyed) pair.state = load(pair.state_id);
  // Every schema to create is made before any table is: a table binberg cannot map gets none.
  std::optional<iceberg::Schema> new_changelog, new_state;
  if (!pair.changelog) new_changelog = changelog_schema(*pair.schema, types);
  if (keyed && !pair.state) new_state = current_state_schema(*pair.schema, types);
  std::map<std::string, std::string> created = properties;
  created[kSourceSchemaProperty] = table_schema_to_json(*pair.schema).dump();
  const auto create = [&](const iceberg::TableIdentifier& id, const iceberg::Schema& schema) {
    spdlog::info("creating Iceberg table {} for {}", id.to_string(), now->qualified_name());
    try {
      return catalog.create_table(id, schema, iceberg::PartitionSpec::unpartitioned(), iceberg::SortOrder::unsorted(),
                                  created);
    } catch (const iceberg::AlreadyExists&) {  // made meanwhile by another writer
      return catalog.load_table(id);
    }
  };
  if (new_changelog) pair.changelog = create(pair.changelog_id, *new_changelog);
  if (new_state) pair.state = create(pair.state_id, *new_state);
  return pair;
}

void apply_change(const RowMapping& mapping, const ChangeEvent& event, iceberg::TableWriter* state,
                  iceberg::TableWriter& changelog) {
  if (state != nullptr) {
    const TableSchema& schema = *event.schema;
    switch (event.op) {
      case Op::kCreate:
      case Op::kSnapshot:
        state->upsert(mapping.state_row(*event.after));
        break;
      case Op::kUpdate:
        if (primary_key_of(schema, *event.before) != primary_key_of(schema, *event.after)) {
          state->remove(mapping.state_row(*event.before));
        }
        state->upsert(mapping.state_row(*event.after));
        break;
      case Op::kDelete:
        state->remove(mapping.state_row(*event.before));
        break;
    }
  }
  changelog.append(mapping.changelog_row(event));
}

EvolvedTables evolve_tables(const mysql::DdlStatement& statement, const TableSchema& before, const TableSchema& now,
                            Acceptance acceptance, const TypeMapping& types, iceberg::TableWriter* state,
                            iceberg::TableWriter& changelog) {
  SchemaChangeInput input;
  input.statement = &statement;
  input.before = &before;
  input.now = &now;
  if (state != nullptr) {
    input.state = &state->table().metadata.current_schema();
    input.state_last_column_id = state->table().metadata.last_column_id;
  }
  input.changelog = &changelog.table().metadata.current_schema();
  input.changelog_last_column_id = changelog.table().metadata.last_column_id;
  input.accepted = acceptance == Acceptance::kByOperator;
  input.types = types;
  SchemaChangePlan plan;
  try {
    plan = plan_schema_change(input);
  } catch (const ConfigError& error) {  // UnmappableTable: a column name or type the tables cannot hold
    throw SchemaChangeRefused(error.what());
  }
  EvolvedTables evolved{plan.source, plan.changes_tables, 0};
  if (!plan.changes_tables) return evolved;
  const std::map<std::string, std::string> properties = {
      {kSourceSchemaProperty, table_schema_to_json(*plan.source).dump()}};
  if (state != nullptr) state->evolve_schema(*plan.state, properties);
  changelog.evolve_schema(plan.changelog, properties);
  if (state == nullptr || plan.existing_rows.empty()) return evolved;
  // Every current row gets the added columns' values. The rows are read in the evolved schema
  // (files by field id, promoted types, added columns null), so they need only the added values.
  const iceberg::Schema& schema = state->table().metadata.current_schema();
  std::vector<std::pair<std::size_t, iceberg::Literal>> added;
  for (const auto& [name, value] : plan.existing_rows) {
    for (std::size_t f = 0; f < schema.fields().size(); ++f) {
      if (schema.fields()[f].name != name) continue;
      added.emplace_back(
          f, to_literal(plan.source->columns[*plan.source->column_index(name)], *schema.fields()[f].type, value));
    }
  }
  std::vector<iceberg::Row> rows = iceberg::read_table_rows(state->table().metadata);
  for (iceberg::Row& row : rows) {
    for (const auto& [f, literal] : added) row[f] = literal;
    state->upsert(std::move(row));
  }
  evolved.filled_rows = rows.size();
  return evolved;
}

}  // namespace binberg::tables
