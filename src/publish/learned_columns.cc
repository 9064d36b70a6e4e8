#include "publish/learned_columns.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/error.h"
#include "tables/schema_change.h"

namespace binberg::publish {

void LearnedColumns::learn(const mysql::DdlStatement& ddl, const TableSchema* registered) {
  using mysql::ColumnChange;
  using mysql::ExistingRowsValue;
  // A column that takes NAME is not whichever column was called NAME before: no alias names it.
  // Aliases match the records' field names exactly, so only that spelling stops being one (after a
  // rename from tier to TIER, the records that spell it tier are still the column's).
  const auto name_taken = [this](const std::string& name) {
    for (auto it = earlier_names.begin(); it != earlier_names.end();) {
      std::erase(it->second, name);
      it = it->second.empty() ? earlier_names.erase(it) : std::next(it);
    }
  };
  // COLUMN as the records spell it (the statement may spell it in another case): as the registered
  // definition has it, else as the statement that named it last did.
  const auto spelled = [&](const std::string& column) {
    if (const auto c = registered ? registered->find_column(column) : std::nullopt) return registered->columns[*c].name;
    if (auto it = earlier_names.find(column); it != earlier_names.end()) return it->first;
    if (auto it = defaults.find(column); it != defaults.end()) return it->first;
    return column;
  };
  // COLUMN is known as TO from now on: its earlier names (and, when its values stay, its default) follow it.
  const auto renamed = [&](const std::string& column, const std::string& to, bool keeps_values) {
    std::vector<std::string> names = {spelled(column)};
    if (auto it = earlier_names.find(column); it != earlier_names.end()) {
      names.insert(names.end(), it->second.begin(), it->second.end());
      earlier_names.erase(it);
    }
    auto default_value = defaults.extract(column);
    name_taken(to);
    std::erase(names, to);  // renamed back: not an alias of itself
    if (!names.empty()) earlier_names[to] = std::move(names);
    defaults.erase(to);
    if (keeps_values && default_value) defaults[to] = std::move(default_value.mapped());
  };
  for (const ColumnChange& change : ddl.changes) {
    switch (change.kind) {
      case ColumnChange::Kind::kAdd: {
        if (registered && registered->find_column(change.column)) break;  // ADD IF NOT EXISTS of a present column
        name_taken(change.column);
        earlier_names.erase(change.column);
        defaults.erase(change.column);
        const auto kind = change.existing_rows.kind;
        if (kind == ExistingRowsValue::Kind::kLiteral || kind == ExistingRowsValue::Kind::kImplicit) {
          defaults[change.column] = change.existing_rows;
        }
        break;
      }
      case ColumnChange::Kind::kDrop:
        earlier_names.erase(change.column);
        defaults.erase(change.column);
        break;
      case ColumnChange::Kind::kRename:
        renamed(change.column, change.new_name, true);
        break;
      case ColumnChange::Kind::kModify:
        // A new definition: the rows no longer hold what the column's ADD gave them.
        if (change.new_name != change.column) renamed(change.column, change.new_name, false);
        defaults.erase(change.new_name);
        break;
      case ColumnChange::Kind::kSetDefault:
      case ColumnChange::Kind::kIndexOrOption:
        break;
      default:  // anything else may have rewritten the column's rows
        defaults.erase(change.column);
        break;
    }
  }
}

envelope::ColumnHistory LearnedColumns::history(const TableSchema& table) const {
  envelope::ColumnHistory history;
  for (const Column& column : table.columns) {
    if (auto it = earlier_names.find(column.name); it != earlier_names.end()) {
      history.earlier_names.emplace(column.name, it->second);
    }
    const auto known = defaults.find(column.name);
    if (column.nullable || known == defaults.end()) continue;
    try {
      if (auto value = tables::existing_rows_value(table, column, known->second))
        history.defaults.emplace(column.name, *value);
    } catch (const Error& error) {
      spdlog::warn("source: table {} column {}: no Avro default: {}", table.qualified_name(), column.name,
                   error.what());
    }
  }
  return history;
}

}  // namespace binberg::publish
