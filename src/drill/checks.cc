#include "drill/checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace binberg::drill {

using evidence::Check;
using evidence::Comparison;

double FaultTimes::recovery_seconds() const {
  return static_cast<double>(recover_ms - std::max(inject_ms, service_back_ms)) / 1000;
}

RecoveryFindings judge_recoveries(const std::vector<FaultTimes>& faults, std::size_t planned) {
  RecoveryFindings findings;
  findings.series.unit = "s";
  findings.series.description = "inject (or the killed service serving again) to recovered, per fault";
  std::vector<double> seconds;
  std::size_t detected = 0;
  for (const FaultTimes& fault : faults) {
    detected += fault.detected ? 1 : 0;
    seconds.push_back(fault.recovery_seconds());
    findings.series.points.emplace_back(fault.inject_ms, seconds.back());
  }
  findings.checks.push_back(Check::compare("faults_detected", detected, Comparison::kEqual, planned,
                                           fmt::format("{} faults injected", faults.size())));
  if (seconds.empty()) {
    findings.checks.push_back(
        Check::skipped("max_recovery_seconds", kRecoveryThresholdSeconds, Comparison::kAtMost, "no fault recovered"));
    return findings;
  }
  std::sort(seconds.begin(), seconds.end());
  findings.worst_seconds = seconds.back();
  findings.checks.push_back(Check::compare(
      "max_recovery_seconds", seconds.back(), Comparison::kAtMost, kRecoveryThresholdSeconds,
      fmt::format("median {:.2f} s over {} faults; goal 5 s", seconds[seconds.size() / 2], seconds.size())));
  return findings;
}

Check history_check(const std::string& name, const verify::HistoryFinding& finding, std::size_t minimum_snapshots,
                    const std::string& what) {
  if (finding.snapshots_checked < minimum_snapshots) {
    return Check::skipped(
        name, 0, Comparison::kEqual,
        fmt::format("only {} snapshots to check, fewer than {}", finding.snapshots_checked, minimum_snapshots));
  }
  std::string detail = fmt::format("{} snapshots: {}", finding.snapshots_checked, what);
  if (!finding.violations.empty()) detail += "; first: " + finding.violations.front();
  return Check::compare(name, finding.violation_count, Comparison::kEqual, 0, detail);
}

Check clean_stop_check(const std::string& name, const std::vector<ProcessExit>& exits) {
  std::string statuses;
  int worst = 0;
  for (const ProcessExit& exit : exits) {
    statuses += fmt::format("{}{} exited {}", statuses.empty() ? "" : ", ", exit.process, exit.status);
    if (exit.status != 0) worst = exit.status;
  }
  if (exits.empty()) return Check::skipped(name, 0, Comparison::kEqual, "no process was running to stop");
  return Check::compare(name, worst, Comparison::kEqual, 0, statuses);
}

Check diversion_check(const std::string& name, std::size_t injected, const DivertedRecords& diverted,
                      const std::string& where) {
  if (injected == 0) return Check::skipped(name, 0, Comparison::kEqual, "no intruder was written");
  // Each intruder once at least (a sink that restarts may divert a record again), nothing else.
  const std::size_t missing = injected - std::min(injected, diverted.intruders.size());
  const std::size_t wrong = missing + diverted.others;
  return Check::compare(name, wrong, Comparison::kEqual, 0,
                        fmt::format("{} of {} intruders in {}, {} missing; {} records of the source diverted there",
                                    diverted.intruders.size(), injected, where, missing, diverted.others));
}

namespace {

// Why REBUILD falls short of TABLES_EACH equal tables that hold rows; empty when it does not.
// `sink --rebuild` exits 0 when every table is equal, 3 with its report when one is not.
std::string rebuild_shortfall(const RebuildOutcome& rebuild, std::size_t tables_each, std::size_t& equal) {
  if (!rebuild.report.is_object() || !rebuild.report.contains("tables"))
    return fmt::format("exit status {}, no report", rebuild.exit_status);
  const nlohmann::json& tables = rebuild.report.at("tables");
  std::string shortfall;
  for (const nlohmann::json& table : tables) {
    const bool holds_rows = table.value("rebuilt_rows", std::uint64_t{0}) > 0;
    if (table.value("equal", false) && holds_rows) {
      ++equal;
    } else if (shortfall.empty()) {
      shortfall = fmt::format("{}: {} rows, sha256 {}; rebuilt {} rows, sha256 {}", table.value("original", "?"),
                              table.value("original_rows", std::uint64_t{0}), table.value("original_digest", "?"),
                              table.value("rebuilt_rows", std::uint64_t{0}), table.value("rebuilt_digest", "?"));
    }
  }
  if (shortfall.empty() && tables.size() != tables_each)
    shortfall = fmt::format("{} tables rebuilt, not {}", tables.size(), tables_each);
  if (shortfall.empty() && rebuild.exit_status != 0) shortfall = fmt::format("exit status {}", rebuild.exit_status);
  return shortfall;
}

}  // namespace

Check rebuilds_check(const std::string& name, const std::vector<RebuildOutcome>& rebuilds, std::size_t tables_each) {
  if (rebuilds.empty()) return Check::skipped(name, 0, Comparison::kEqual, "no rebuild ran");
  std::size_t equal = 0, short_rebuilds = 0;
  std::string first;
  for (const RebuildOutcome& rebuild : rebuilds) {
    const std::string shortfall = rebuild_shortfall(rebuild, tables_each, equal);
    if (shortfall.empty()) continue;
    if (short_rebuilds++ == 0) first = fmt::format("; first: from {}: {}", rebuild.from, shortfall);
  }
  return Check::compare(name, short_rebuilds, Comparison::kEqual, 0,
                        fmt::format("{} rebuilds, {} of {} rebuilt tables equal to their originals{}", rebuilds.size(),
                                    equal, rebuilds.size() * tables_each, first));
}

Check contract_check(const std::string& name, const std::vector<ContractChange>& changes) {
  if (changes.empty()) return Check::skipped(name, 0, Comparison::kEqual, "no change to the contract was made");
  std::size_t wrong = 0;
  std::string answers;
  for (const ContractChange& change : changes) {
    const bool taken = change.registry_status >= 200 && change.registry_status < 300;
    const bool right = change.compatible ? taken : change.registry_status == 409;
    wrong += right ? 0 : 1;
    answers += fmt::format(
        "{}{} ({}): {}{}", answers.empty() ? "" : "; ", change.what, change.compatible ? "compatible" : "incompatible",
        change.registry_status == 0 ? "no answer seen" : std::to_string(change.registry_status), right ? "" : " WRONG");
  }
  return Check::compare(name, wrong, Comparison::kEqual, 0, answers);
}

Check compaction_check(const std::string& name, const std::vector<CompactionOutcome>& compactions) {
  if (compactions.empty()) return Check::skipped(name, 0, Comparison::kEqual, "no table was compacted");
  std::size_t short_of = 0;
  std::string detail;
  for (const CompactionOutcome& compaction : compactions) {
    const bool fewer = compaction.committed && compaction.files_after < compaction.files_before;
    short_of += fewer ? 0 : 1;
    detail +=
        fmt::format("{}{}: {} -> {} files{}", detail.empty() ? "" : "; ", compaction.table, compaction.files_before,
                    compaction.files_after, compaction.committed ? (fewer ? "" : " NOT FEWER") : " NOT COMMITTED");
  }
  return Check::compare(name, short_of, Comparison::kEqual, 0, detail);
}

ParityFindings judge_parity(const nlohmann::json& reconcile) {
  struct Digests {
    std::string source, a, b;
  };
  std::map<std::string, Digests> tables;
  const auto digest = [](const nlohmann::json& entry, const char* side) {
    return entry.value(nlohmann::json::json_pointer(fmt::format("/{}/digest", side)), std::string());
  };
  for (const nlohmann::json& entry : reconcile) {
    Digests& digests = tables[entry.at("table").get<std::string>()];
    (entry.at("path") == "A" ? digests.a : digests.b) = digest(entry, "iceberg");
    if (digests.source.empty()) digests.source = digest(entry, "source");
  }
  ParityFindings findings;
  std::size_t unequal = 0;
  std::string first;
  for (const auto& [table, digests] : tables) {
    const bool equal = !digests.a.empty() && digests.a == digests.b && digests.a == digests.source;
    findings.rows.push_back({{"table", table},
                             {"source_digest", digests.source},
                             {"a_digest", digests.a},
                             {"b_digest", digests.b},
                             {"equal", equal}});
    if (!equal && unequal++ == 0) {
      first = fmt::format("{}: source {}, A {}, B {}", table, digests.source, digests.a, digests.b);
    }
  }
  if (tables.empty()) {
    findings.check = Check::skipped("parity_a_b", 0, Comparison::kEqual, "no reconcile result to compare");
    return findings;
  }
  findings.check =
      Check::compare("parity_a_b", unequal, Comparison::kEqual, 0,
                     unequal == 0 ? fmt::format("{} tables: A, B and the source have one digest each", tables.size())
                                  : fmt::format("{} of {} tables differ; first: {}", unequal, tables.size(), first));
  return findings;
}

}  // namespace binberg::drill
