// The drills, as data: each is a name, a title, the paths it runs and its body. docs/drills.md says
// what each proves and what it does not.

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <functional>

#include "core/error.h"
#include "drill/drill.h"
#include "drill/drill_run.h"
#include "drill/pipeline.h"
#include "drill/signals.h"
#include "drill/workload.h"
#include "lab/stack_control.h"

namespace binberg::drill {
namespace {

using evidence::Check;
using evidence::Comparison;
using evidence::Phase;

constexpr std::chrono::seconds kStepTimeout{120};   // a step that takes longer aborts the drill
constexpr double kRecoveryThresholdSeconds = 30;    // the check; the goal is 5 s (docs/drills.md)
constexpr std::size_t kSnapshotsBetweenFaults = 3;  // committed progress between two faults

std::uint64_t initial_rows(const DrillRun& run) { return run.options().size == DrillSize::kQuick ? 500 : 5'000; }

std::string exit_text(int status) {
  return status < 0 ? fmt::format("killed by signal {}", -status) : fmt::format("exit status {}", status);
}

// One fault, timed from the system's signals.
struct FaultTimes {
  std::int64_t inject_ms = 0, detect_ms = 0, recover_ms = 0;
  // When a killed service (MariaDB, the broker) served again: binberg's recovery is counted from
  // there, the service's own restart is not binberg's. 0 when the fault was a binberg process.
  std::int64_t service_back_ms = 0;
  bool detected = false;  // the signal the drill expects came (e.g. the exit status of a SIGKILL)

  // Seconds binberg took to recover: from the fault, or from its service's return.
  double recovery_seconds() const {
    return static_cast<double>(recover_ms - std::max(inject_ms, service_back_ms)) / 1000;
  }
};

// What every fault drill ends with: how many faults were seen, how long recovery took.
void check_recoveries(DrillRun& run, const std::vector<FaultTimes>& faults, std::size_t planned) {
  evidence::Series& series = run.record().samples["recovery_seconds"];
  series.unit = "s";
  series.description = "inject (or the killed service serving again) to recovered, per fault";
  std::vector<double> seconds;
  std::size_t detected = 0;
  for (const FaultTimes& fault : faults) {
    detected += fault.detected ? 1 : 0;
    seconds.push_back(fault.recovery_seconds());
    series.points.emplace_back(fault.inject_ms, seconds.back());
  }
  run.check(Check::compare("faults_detected", detected, Comparison::kEqual, planned,
                           fmt::format("{} faults injected", faults.size())));
  if (seconds.empty()) {
    run.check(
        Check::skipped("max_recovery_seconds", kRecoveryThresholdSeconds, Comparison::kAtMost, "no fault recovered"));
    return;
  }
  std::sort(seconds.begin(), seconds.end());
  run.record().recovery_seconds = seconds.back();
  run.check(Check::compare(
      "max_recovery_seconds", seconds.back(), Comparison::kAtMost, kRecoveryThresholdSeconds,
      fmt::format("median {:.2f} s over {} faults; goal 5 s", seconds[seconds.size() / 2], seconds.size())));
}

// How long a workload phase lasts: long enough for the faults to land while the generator runs.
std::chrono::seconds workload_spread(std::size_t rounds) {
  return std::chrono::seconds(std::max<std::size_t>(10, 3 * rounds));
}

// A fault: injects, detects, recovers, and says when each happened.
using Fault = std::function<FaultTimes(DrillRun&, Pipeline&, Workload&, std::size_t round)>;

// Makes the drill's pipeline over the workload's tables.
using MakePipeline = std::function<std::unique_ptr<Pipeline>(DrillRun&, const Workload&)>;

template <typename Path>
std::unique_ptr<Pipeline> make(DrillRun& run, const Workload& workload) {
  return std::make_unique<Path>(run, workload);
}

// When a drill injects its next fault.
enum class FaultGate {
  kCommittedProgress,  // once the tables committed more snapshots since the last one
  kByItself,           // the fault comes by itself (an armed failpoint): the drill waits for it
};

// The skeleton of the drills: tables loaded, the pipeline started (ENVIRONMENT) and through its
// initial copy, the workload running; ROUNDS faults, each at GATE; the workload finished; then verify.
void under_faults(DrillRun& run, const MakePipeline& make_pipeline, std::size_t rounds, FaultGate gate,
                  const Fault& fault, const Environment& environment = {}) {
  Workload workload(run, initial_rows(run));
  const std::unique_ptr<Pipeline> pipeline = make_pipeline(run, workload);
  Pipeline& path = *pipeline;
  run.mark(Phase::kStart, "drill",
           fmt::format("{} tables loaded, path {} starting", workload.tables().size(), path.path()), unix_ms());
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
  run.record().events += result.row_events();
  run.check(Check::compare("workload_completed", result.error.empty(), Comparison::kHolds, true,
                           result.error.empty() ? fmt::format("{} generator row events, {} transfers ({} row events)",
                                                              result.events, result.transfers, result.transfer_events)
                                                : result.error));
  check_recoveries(run, faults, rounds);
  path.verify(workload);
}

// SIGKILLs the pipeline's process NAME and starts it again; recovered once the tables hold what
// the source held at the kill.
Fault kill_and_restart(const std::string& name) {
  return [name](DrillRun& run, Pipeline& path, Workload&, std::size_t) {
    FaultTimes times;
    const mysql::BinlogPosition position = run.source_position();
    times.inject_ms = unix_ms();
    const ProcessExit exit = path.kill(name);
    run.mark(Phase::kInject, "SIGKILL sent to " + name, "source at " + position.to_string(), times.inject_ms);
    times.detect_ms = exit.at_ms;
    times.detected = exit.status == -SIGKILL;
    run.mark(Phase::kDetect, fmt::format("waitpid: {} {}", name, exit_text(exit.status)), "", times.detect_ms);
    path.start_process(name);
    times.recover_ms = path.wait_until_tables_contain(position, kStepTimeout);
    run.mark(Phase::kRecover, "snapshot summary: binberg.source position", "tables hold " + position.to_string(),
             times.recover_ms);
    return times;
  };
}

// The commit protocol's failpoints in the order a commit meets them (docs/failpoints.md).
const std::vector<std::string>& commit_failpoints() {
  static const std::vector<std::string> points = {"source.before_transaction_complete",
                                                  "pipeline.before_prepare",
                                                  "iceberg.parquet.before_close",
                                                  "iceberg.writer.after_data_files",
                                                  "iceberg.writer.after_delete_files",
                                                  "iceberg.writer.after_manifests",
                                                  "iceberg.writer.after_metadata_file",
                                                  "pipeline.before_commit",
                                                  "iceberg.catalog.before_commit",
                                                  "iceberg.catalog.after_commit",
                                                  "pipeline.after_commit"};
  return points;
}

Environment crash_at(const std::string& failpoint) {
  // @3: two commits go through after each restart, so the crashes interleave with progress.
  return Environment{{"BINBERG_FAILPOINTS", failpoint + "=crash@3"}};
}

// Replicate runs with the next failpoint armed; it crashes there by itself (exit status: SIGKILL,
// and the failpoint's line in its log), starts again without it, and once recovered is stopped
// (SIGTERM) and started with the following one.
FaultTimes crash_at_next_failpoint(DrillRun& run, Pipeline& path, Workload&, std::size_t round) {
  const std::string& point = commit_failpoints().at(round);
  FaultTimes times;
  const std::uintmax_t from = log_size(run.log("replicate"));
  const ProcessExit exit = path.wait_for_exit("replicate", kStepTimeout);
  const mysql::BinlogPosition position = run.source_position();
  times.inject_ms = log_line_time(run.log("replicate"), "failpoint " + point + " fired", from).value_or(exit.at_ms);
  run.mark(Phase::kInject, "replicate log: failpoint fired", point + "=crash", times.inject_ms);
  times.detect_ms = exit.at_ms;
  times.detected = exit.status == -SIGKILL;
  run.mark(Phase::kDetect, "waitpid: replicate " + exit_text(exit.status), point, times.detect_ms);
  path.start();
  times.recover_ms = path.wait_until_tables_contain(position, kStepTimeout);
  run.mark(Phase::kRecover, "snapshot summary: binberg.source position", "tables hold " + position.to_string(),
           times.recover_ms);
  lab::ChildProcess& replicate = run.process("replicate");
  replicate.send(SIGTERM);
  const std::optional<int> stopped = replicate.wait_for_exit(std::chrono::seconds(60));
  if (stopped != 0) {
    throw DrillAborted(fmt::format("replicate did not stop cleanly on SIGTERM after {}: {}", point,
                                   stopped ? exit_text(*stopped) : "still running"));
  }
  if (round + 1 < commit_failpoints().size()) {
    path.start(crash_at(commit_failpoints()[round + 1]));
  } else {
    path.start();
  }
  return times;
}

// SIGKILLs MariaDB itself under load and starts it again; replicate must reconnect by itself.
// Recovered once the tables hold everything the source had committed when it came back.
FaultTimes kill_and_restart_mariadb(DrillRun& run, Pipeline& path, Workload& workload, std::size_t) {
  FaultTimes times;
  const std::uintmax_t from = log_size(run.log("replicate"));
  times.inject_ms = unix_ms();
  const pid_t pid = lab::kill_service(run.stack().dir, "mariadb");
  run.mark(Phase::kInject, "SIGKILL sent to mariadbd", fmt::format("pid {}", pid), times.inject_ms);
  const PhaseResult interrupted = workload.stop();
  run.record().events += interrupted.row_events();
  run.progress("mariadb killed; the workload stopped at: " + interrupted.error.substr(0, 120));
  const DrillRun::Finished restarted =
      run.run_to_end("services", {"services", "up", "--only", "mariadb", "--dir", run.stack().dir, "--port-offset",
                                  std::to_string(run.options().port_offset)});
  if (restarted.exit_status != 0)
    throw DrillAborted("mariadb did not start again; see " + run.log("services").string());
  times.service_back_ms = unix_ms();
  run.mark(Phase::kNote, "binberg services up --only mariadb exited 0", "the source serves again",
           times.service_back_ms);
  const mysql::BinlogPosition position = run.source_position();
  const auto detected = log_line_time(run.log("replicate"), "reconnecting in", from);
  times.detected = detected.has_value();
  times.detect_ms = detected.value_or(unix_ms());
  run.mark(Phase::kDetect, "replicate log: binlog source lost, reconnecting", "", times.detect_ms);
  // The load goes on against the restarted server (and gives replicate something to commit).
  workload.start(run.options().workload_events() / 2, workload_spread(1));
  times.recover_ms = path.wait_until_tables_contain(position, kStepTimeout);
  run.mark(Phase::kRecover, "snapshot summary: binberg.source position", "tables hold " + position.to_string(),
           times.recover_ms);
  return times;
}

// SIGKILLs the Kafka broker under load and starts it again (`binberg services up --only kafka`);
// source and sink must ride it out by themselves. Detected by the first warning either logs after
// the kill; recovered once the tables hold what the source held at the kill.
FaultTimes kill_and_restart_broker(DrillRun& run, Pipeline& path, Workload&, std::size_t) {
  FaultTimes times;
  const std::uintmax_t source_from = log_size(run.log("source")), sink_from = log_size(run.log("sink"));
  const mysql::BinlogPosition position = run.source_position();
  times.inject_ms = unix_ms();
  const pid_t pid = lab::kill_service(run.stack().dir, "kafka");
  run.mark(Phase::kInject, "SIGKILL sent to the Kafka broker", fmt::format("pid {}", pid), times.inject_ms);
  const DrillRun::Finished restarted =
      run.run_to_end("services", {"services", "up", "--only", "kafka", "--dir", run.stack().dir, "--port-offset",
                                  std::to_string(run.options().port_offset)});
  if (restarted.exit_status != 0) throw DrillAborted("Kafka did not start again; see " + run.log("services").string());
  times.service_back_ms = unix_ms();
  run.mark(Phase::kNote, "binberg services up --only kafka exited 0", "the broker serves again", times.service_back_ms);
  std::optional<std::int64_t> detected;
  for (const auto& [name, from] : {std::pair{"source", source_from}, std::pair{"sink", sink_from}}) {
    const auto at = log_line_time(run.log(name), "[warning]", from);
    if (at && (!detected || *at < *detected)) detected = at;
  }
  times.detected = detected.has_value();
  times.detect_ms = detected.value_or(unix_ms());
  run.mark(Phase::kDetect, "source or sink log: first warning after the kill", "", times.detect_ms);
  for (const std::string& name : path.processes()) {
    if (!run.process(name).running()) throw DrillAborted(name + " exited while the broker was down");
  }
  times.recover_ms = path.wait_until_tables_contain(position, kStepTimeout);
  run.mark(Phase::kRecover, "snapshot summary: binberg.sink.offsets", "tables hold " + position.to_string(),
           times.recover_ms);
  return times;
}

std::size_t rounds(const DrillRun& run, std::size_t quick, std::size_t full) {
  return run.options().size == DrillSize::kQuick ? quick : full;
}

}  // namespace

const std::vector<Drill>& all_drills() {
  static const std::vector<Drill> drills = {
      {"replicate-kill", "SIGKILL binberg replicate under load, again and again; it resumes from the tables", "A",
       [](DrillRun& run) {
         under_faults(run, make<PathA>, rounds(run, 3, 6), FaultGate::kCommittedProgress,
                      kill_and_restart("replicate"));
       }},
      {"commit-crash", "binberg replicate crashes at every step of its commit protocol; nothing lost or repeated", "A",
       [](DrillRun& run) {
         under_faults(run, make<PathA>, commit_failpoints().size(), FaultGate::kByItself, crash_at_next_failpoint,
                      crash_at(commit_failpoints().front()));
       }},
      {"mariadb-restart", "SIGKILL the source MariaDB under load and start it again; replicate reconnects by itself",
       "A",
       [](DrillRun& run) {
         under_faults(run, make<PathA>, rounds(run, 1, 3), FaultGate::kCommittedProgress, kill_and_restart_mariadb);
       }},
      {"broker-restart", "SIGKILL the Kafka broker under load and start it again; source and sink ride it out", "B",
       [](DrillRun& run) {
         under_faults(run, make<PathB>, rounds(run, 1, 2), FaultGate::kCommittedProgress, kill_and_restart_broker);
       }},
      {"sink-kill", "SIGKILL binberg sink under load, again and again; it resumes from the offsets in its tables", "B",
       [](DrillRun& run) {
         under_faults(run, make<PathB>, rounds(run, 3, 6), FaultGate::kCommittedProgress, kill_and_restart("sink"));
       }},
      {"source-kill", "SIGKILL binberg source (exactly-once to Kafka) under load; nothing repeated downstream", "B",
       [](DrillRun& run) {
         under_faults(run, make<PathB>, rounds(run, 3, 6), FaultGate::kCommittedProgress, kill_and_restart("source"));
       }},
  };
  return drills;
}

const Drill* find_drill(const std::string& name) {
  for (const Drill& drill : all_drills()) {
    if (drill.name == name) return &drill;
  }
  return nullptr;
}

std::uint64_t DrillOptions::workload_events() const {
  if (events > 0) return events;
  return size == DrillSize::kQuick ? 5'000 : 100'000;
}

}  // namespace binberg::drill
