#pragma once

// The path B drills whose faults come from outside binberg's processes: records written into a
// topic by another producer, rebuilds from the topics, changes to a table's schema contract. Each
// is the body of a drill in the table in drills.cc; docs/drills.md explains them.

#include "drill/drill_run.h"
#include "drill/intruder.h"

namespace binberg::drill {

// poison-dlq and mis-keying: intruders of KIND written into the ledger's topic under load.
void under_intruders(DrillRun& run, IntruderKind kind);
// offset-replay: `binberg sink --rebuild` from offset 0 and from a timestamp under load.
void under_rebuilds(DrillRun& run);
// schema-contract: a compatible DDL, an incompatible registration and an incompatible DDL.
void under_contract_changes(DrillRun& run);

}  // namespace binberg::drill
