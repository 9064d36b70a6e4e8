#pragma once

// The checks a drill computes from what it measured: pure functions of their inputs, so that a test
// can make each one fail (tests/drill/checks_test.cc). Too little to judge is a skip, never a pass.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/run_record.h"
#include "verify/snapshot_history.h"

namespace binberg::drill {

// The check on every recovery; the goal is 5 s (docs/drills.md), the lab took 24–52 s.
inline constexpr double kRecoveryThresholdSeconds = 30;

// One fault, timed from the system's signals.
struct FaultTimes {
  std::int64_t inject_ms = 0, detect_ms = 0, recover_ms = 0;
  // When a killed service (MariaDB, the broker) served again: binberg's recovery is counted from
  // there, the service's own restart is not binberg's. 0 when the fault was a binberg process.
  std::int64_t service_back_ms = 0;
  bool detected = false;  // the signal the drill expects came (e.g. the exit status of a SIGKILL)

  // Seconds binberg took to recover: from the fault, or from its service's return.
  double recovery_seconds() const;
};

struct RecoveryFindings {
  std::vector<evidence::Check> checks;  // faults_detected, max_recovery_seconds
  evidence::Series series;              // recovery seconds per fault
  std::optional<double> worst_seconds;
};

// Every one of PLANNED faults was seen, and each recovered within kRecoveryThresholdSeconds.
RecoveryFindings judge_recoveries(const std::vector<FaultTimes>& faults, std::size_t planned);

// NAME over FINDING, a check over every snapshot of a table; fewer than MINIMUM_SNAPSHOTS is a skip.
evidence::Check history_check(const std::string& name, const verify::HistoryFinding& finding,
                              std::size_t minimum_snapshots, const std::string& what);

struct ParityFindings {
  evidence::Check check;             // parity_a_b
  std::vector<nlohmann::json> rows;  // per table: its source, A and B digests (the record's parity)
};

// From the reconcile entries both paths recorded (RECONCILE: {path, table, source, iceberg, ...}):
// every table's digest is one across path A, path B and the source; none to compare is a skip.
ParityFindings judge_parity(const nlohmann::json& reconcile);

// What a dead-letter or quarantine topic holds after a drill's intruders (drill/intruder.h): the
// marks of the intruders found there, and how many records of the source itself.
struct DivertedRecords {
  std::set<std::string> intruders;
  std::size_t others = 0;
};

// NAME: each of the INJECTED intruders was diverted (WHERE: the topic's suffix), and no record of
// the source was; nothing injected is a skip.
evidence::Check diversion_check(const std::string& name, std::size_t injected, const DivertedRecords& diverted,
                                const std::string& where);

// One `binberg sink --rebuild` of a drill: where it started from, how it ended, and its report
// (`--json`, sink/sink_rebuild.h; null when it printed none).
struct RebuildOutcome {
  std::string from;
  int exit_status = 0;
  nlohmann::json report;
};

// NAME: every rebuild exited 0 and rebuilt TABLES_EACH tables, each holding rows and equal to the
// original it compares with (rows and digest); no rebuild is a skip.
evidence::Check rebuilds_check(const std::string& name, const std::vector<RebuildOutcome>& rebuilds,
                               std::size_t tables_each);

// One change to a table's schema contract a drill made, and how the schema registry answered it.
struct ContractChange {
  std::string what;
  bool compatible = false;  // the subject's rule must take it; otherwise refuse it
  int registry_status = 0;  // the registry's HTTP status for it; 0: no answer seen
};

// NAME: the registry took every compatible change (2xx) and refused every incompatible one with
// 409; no change is a skip.
evidence::Check contract_check(const std::string& name, const std::vector<ContractChange>& changes);

// One `binberg table compact` of a drill: the table, whether it committed, and its live files
// (data and delete) before it and in the snapshot it committed.
struct CompactionOutcome {
  std::string table;
  bool committed = false;
  std::size_t files_before = 0, files_after = 0;
};

// NAME: every compaction committed and left its table with fewer live files than before; none is a
// skip.
evidence::Check compaction_check(const std::string& name, const std::vector<CompactionOutcome>& compactions);

// How a pipeline's process ended when the drill stopped or killed it.
struct ProcessExit {
  std::string process;
  int status = 0;  // exit status, or -signal
  std::int64_t at_ms = 0;
};

// NAME: every process of a pipeline exited 0 when asked to stop (SIGTERM).
evidence::Check clean_stop_check(const std::string& name, const std::vector<ProcessExit>& exits);

}  // namespace binberg::drill
