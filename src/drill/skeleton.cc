#include "drill/skeleton.h"

#include <fmt/format.h>

#include <algorithm>

#include "drill/metric_sampler.h"

namespace binberg::drill {
namespace {

using evidence::Check;
using evidence::Comparison;
using evidence::Phase;

constexpr std::size_t kSnapshotsBetweenFaults = 3;  // committed progress between two faults

std::uint64_t initial_rows(const DrillRun& run) { return run.options().size == DrillSize::kQuick ? 500 : 5'000; }

}  // namespace

std::string exit_text(int status) {
  return status < 0 ? fmt::format("killed by signal {}", -status) : fmt::format("exit status {}", status);
}

std::chrono::seconds workload_spread(std::size_t rounds) {
  return std::chrono::seconds(std::max<std::size_t>(10, 3 * rounds));
}

std::size_t rounds(const DrillRun& run, std::size_t quick, std::size_t full) {
  return run.options().size == DrillSize::kQuick ? quick : full;
}

void under_faults(DrillRun& run, PathChoice choice, std::size_t rounds, FaultGate gate, const Fault& fault,
                  const Environment& environment) {
  Workload workload(run, initial_rows(run));
  Paths path(run, workload, choice);
  run.mark(Phase::kStart, "drill",
           fmt::format("{} tables loaded, path {} starting", workload.tables().size(), path.names()), unix_ms());
  MetricSampler sampler(path.processes(), [&run](const std::string& name) { return run.log(name); });
  path.start(environment);
  run.wait_for("the initial copy", kStepTimeout, [&] { return path.committed_snapshots() > 0; });
  workload.start(run.options().workload_events(), workload_spread(rounds));
  std::vector<FaultTimes> faults;
  for (std::size_t round = 0; round < rounds; ++round) {
    if (gate == FaultGate::kCommittedProgress) {
      const std::size_t enough = path.committed_snapshots() + kSnapshotsBetweenFaults;
      run.wait_for("committed progress before the next fault", kStepTimeout,
                   [&] { return path.committed_snapshots() >= enough; });
    }
    faults.push_back(fault(run, path, workload, round));
    run.progress(fmt::format("fault {}/{}: recovered in {:.2f} s; {} row events so far", round + 1, rounds,
                             faults.back().recovery_seconds(), workload.events_done()));
  }
  const PhaseResult result = workload.finish();
  sampler.finish(run.record());
  run.record().events += result.row_events();
  run.check(Check::compare("workload_completed", result.error.empty(), Comparison::kHolds, true,
                           result.error.empty() ? fmt::format("{} generator row events, {} transfers ({} row events)",
                                                              result.events, result.transfers, result.transfer_events)
                                                : result.error));
  if (rounds > 0) {  // a drill without faults (parity) has no recovery to judge
    RecoveryFindings recoveries = judge_recoveries(faults, rounds);
    run.record().samples["recovery_seconds"] = std::move(recoveries.series);
    run.record().recovery_seconds = recoveries.worst_seconds;
    for (Check& check : recoveries.checks) run.check(std::move(check));
  }
  path.verify(workload);
}

}  // namespace binberg::drill
