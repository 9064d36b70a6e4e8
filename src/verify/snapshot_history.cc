#include "verify/snapshot_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "iceberg/table_scan.h"

namespace binberg::verify {
namespace {

constexpr std::size_t kMaxViolations = 20;  // enough to see the pattern; the count says the rest

std::size_t column_index(const iceberg::Schema& schema, const std::string& name,
                         const iceberg::TableIdentifier& table) {
  const auto& fields = schema.fields();
  const auto at = std::find_if(fields.begin(), fields.end(), [&](const auto& field) { return field.name == name; });
  if (at == fields.end()) fail("table {} has no column {}", table.to_string(), name);
  return static_cast<std::size_t>(at - fields.begin());
}

std::int64_t integer_value(const iceberg::Literal& value) {
  if (const auto* wide = std::get_if<std::int64_t>(&value)) return *wide;
  if (const auto* narrow = std::get_if<std::int32_t>(&value)) return *narrow;
  fail("not an integer column");
}

void add_violation(HistoryFinding& finding, std::string text) {
  ++finding.violation_count;
  if (finding.violations.size() < kMaxViolations) finding.violations.push_back(std::move(text));
}

std::string commit_id_of(const iceberg::TableMetadata& metadata, std::int64_t snapshot_id) {
  const iceberg::Snapshot* snapshot = metadata.find_snapshot(snapshot_id);
  if (snapshot == nullptr) return "?";
  const auto at = snapshot->summary.find("binberg.commit-id");
  return at == snapshot->summary.end() ? "?" : at->second;
}

}  // namespace

HistoryFinding check_every_snapshot_sums_to(iceberg::Catalog& catalog, const iceberg::TableIdentifier& table,
                                            const std::string& column, std::int64_t total) {
  const iceberg::LoadedTable state = catalog.load_table(table);
  const iceberg::Schema& schema = state.metadata.current_schema();
  const std::size_t summed = column_index(schema, column, table);
  HistoryFinding finding;
  for (const auto& entry : state.metadata.snapshot_log) {
    std::int64_t sum = 0;
    iceberg::scan_rows(
        iceberg::plan_scan(state.metadata, entry.snapshot_id), schema,
        [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) { sum += integer_value(row[summed]); });
    if (sum != total) {
      add_violation(
          finding, fmt::format("{} snapshot {} (commit {}): sum({}) = {}, not {}", table.to_string(), entry.snapshot_id,
                               commit_id_of(state.metadata, entry.snapshot_id), column, sum, total));
    }
    ++finding.snapshots_checked;
  }
  return finding;
}

HistoryFinding check_whole_transactions(iceberg::Catalog& catalog,
                                        const std::vector<iceberg::TableIdentifier>& changelogs) {
  HistoryFinding finding;
  std::map<std::string, std::string> commit_of_transaction;  // the commit that first held it
  for (const iceberg::TableIdentifier& id : changelogs) {
    const iceberg::LoadedTable changelog = catalog.load_table(id);
    const iceberg::Schema& schema = changelog.metadata.current_schema();
    const std::size_t gtid_column = column_index(schema, "_gtid", id), op_column = column_index(schema, "_op", id);
    const auto transaction_of = [&](const iceberg::Row& row) {
      // The initial copy's rows carry the copy's GTID position, not a transaction's GTID.
      const auto* gtid = std::get_if<std::string>(&row[gtid_column]);
      const std::string name = gtid == nullptr ? "(no gtid)" : *gtid;
      return std::get<std::string>(row[op_column]) == "r" ? "copy at " + name : name;
    };
    std::map<std::string, std::size_t> final_events;
    iceberg::scan_rows(
        iceberg::plan_scan(changelog.metadata), schema,
        [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) { ++final_events[transaction_of(row)]; });
    std::set<std::string> seen_files, seen_transactions;
    for (const auto& entry : changelog.metadata.snapshot_log) {
      iceberg::ScanPlan plan = iceberg::plan_scan(changelog.metadata, entry.snapshot_id);
      std::erase_if(plan.data_files, [&](const iceberg::LiveFile& file) {
        return !seen_files.insert(file.file.file_path).second;  // only what this snapshot added
      });
      std::map<std::string, std::size_t> added;
      iceberg::scan_rows(plan, schema, [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) {
        ++added[transaction_of(row)];
      });
      const std::string commit_id = commit_id_of(changelog.metadata, entry.snapshot_id);
      for (const auto& [transaction, events] : added) {
        if (events != final_events[transaction]) {
          add_violation(finding, fmt::format("{} snapshot {}: holds {} of the {} events of {}", id.to_string(),
                                             entry.snapshot_id, events, final_events[transaction], transaction));
        }
        if (!seen_transactions.insert(transaction).second) {
          add_violation(finding, fmt::format("{}: {} arrived in two snapshots", id.to_string(), transaction));
        }
        const auto [at, first] = commit_of_transaction.emplace(transaction, commit_id);
        if (at->second != commit_id) {
          add_violation(finding, fmt::format("{} became visible in different commits per table ({} and {})",
                                             transaction, at->second, commit_id));
        }
        finding.transactions_checked += first ? 1 : 0;
      }
      ++finding.snapshots_checked;
    }
  }
  return finding;
}

}  // namespace binberg::verify
