#include "drill/checks.h"

#include <fmt/format.h>

#include <algorithm>

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

}  // namespace binberg::drill
