#pragma once

// The skeleton every drill body is built on (drills.cc, path_b_drills.cc): tables loaded, the
// pipelines started and through their initial copy, the workload running, a number of faults each
// injected at a gate, the workload finished, then verify; and what the bodies share.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "drill/checks.h"
#include "drill/drill_run.h"
#include "drill/paths.h"
#include "drill/workload.h"

namespace binberg::drill {

inline constexpr std::chrono::seconds kStepTimeout{120};  // a step that takes longer aborts the drill

// "exit status N" or "killed by signal N" for a waitpid STATUS (negative: the signal).
std::string exit_text(int status);

// How long a workload phase lasts: long enough for the faults to land while the generator runs.
std::chrono::seconds workload_spread(std::size_t rounds);

// QUICK faults at --quick size, FULL otherwise.
std::size_t rounds(const DrillRun& run, std::size_t quick, std::size_t full);

// A fault: injects, detects, recovers, and says when each happened.
using Fault = std::function<FaultTimes(DrillRun&, Paths&, Workload&, std::size_t round)>;

// When a drill injects its next fault.
enum class FaultGate {
  kCommittedProgress,  // once the tables committed more snapshots since the last one
  kByItself,           // the fault comes by itself (an armed failpoint): the drill waits for it
};

// The skeleton of the drills: tables loaded, the pipelines started (ENVIRONMENT) and through their
// initial copy, the workload running; ROUNDS faults, each at GATE; the workload finished; then verify.
void under_faults(DrillRun& run, PathChoice choice, std::size_t rounds, FaultGate gate, const Fault& fault,
                  const Environment& environment = {});

}  // namespace binberg::drill
