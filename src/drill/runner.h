#pragma once

// `binberg drill run`: brings the drill stack up (unless it runs already), runs the drills one after
// another, writes one run record each into a new run folder, seals it (manifest.json) and prints
// one summary line per drill. A drill that breaks off is recorded with its error and fails; the
// others still run.

#include <string>
#include <vector>

#include "drill/drill.h"

namespace binberg::drill {

// Runs DRILLS (names; "all" for every drill); COMMAND_LINE goes into the records' provenance.
// Exit code: 0 when every drill passed, 1 otherwise.
int run_drills(const DrillOptions& options, const std::vector<std::string>& drills,
               const std::vector<std::string>& command_line);

}  // namespace binberg::drill
