#include "sink/table_evolution.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace binberg::sink {

void evolve_table(TableOutput& output, const TableState& table, const MetSchemaChange& met,
                  const std::vector<std::string>& accepted) {
  const SchemaChangeRecord& statement = met.statement;
  const std::string where = fmt::format("{} (transaction {}; topic {} offsets {})", statement.position.to_string(),
                                        statement.txn, table.topic, offsets_json(met.offsets));
  const Acceptance acceptance = std::find(accepted.begin(), accepted.end(), statement.txn) != accepted.end()
                                    ? Acceptance::kByOperator
                                    : Acceptance::kByPolicy;
  tables::EvolvedTables evolved;
  try {
    evolved = output.evolve(statement.change, acceptance);
  } catch (const tables::SchemaChangeRefused& error) {
    throw TableStopped(
        table.topic,
        fmt::format("table {}: schema change at {} refused: {}. binberg sink stops writing the table before it, so "
                    "nothing is lost, and goes on with the other tables; the table stays at offsets {}. Accept the "
                    "change with binberg sink --accept-schema-change {} (docs/schema-evolution.md). Statement: {}",
                    output.changelog_id()->to_string(), where, error.what(), progress_json(table.committed),
                    statement.txn, statement.change.statement.substr(0, 300)));
  }
  if (acceptance == Acceptance::kByOperator) {
    spdlog::warn("sink: table {}: applying schema change at {} as accepted by the operator", table.topic, where);
  }
  spdlog::info("sink: table {}: schema change at {} applied{}", output.changelog_id()->to_string(), where,
               evolved.filled_rows == 0
                   ? ""
                   : fmt::format("; {} existing rows given the added columns' values", evolved.filled_rows));
}

}  // namespace binberg::sink
