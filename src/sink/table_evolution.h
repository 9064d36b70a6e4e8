#pragma once

// A source schema change applied to a table's Iceberg side in path B: the policy and the
// operator's acceptance (schema_change.h) decide, as in path A.

#include <string>
#include <vector>

#include "sink/session_state.h"
#include "sink/table_output.h"

namespace binberg::sink {

// Evolves OUTPUT, the open Iceberg side of TABLE, by the statement MET, as the policy allows or the
// operator accepted (ACCEPTED: their transaction ids); logs what it did. A refused statement
// throws TableStopped naming how to accept it: that table stops before it, the others go on.
void evolve_table(TableOutput& output, const TableState& table, const MetSchemaChange& met,
                  const std::vector<std::string>& accepted);

}  // namespace binberg::sink
