#pragma once

// The rules a new table schema must follow against the current one (spec "Schema Evolution").

#include <cstdint>

#include "iceberg/schema.h"

namespace binberg::iceberg {

// True when a column of type FROM may become TO: equal, int->long, float->double, or
// decimal(P,S)->decimal(P',S) with P' >= P.
bool is_valid_promotion(const Type& from, const Type& to);

// Throws Error naming the offending field unless NEXT evolves CURRENT validly:
//  - a field id of NEXT absent from CURRENT is new and must be above LAST_COLUMN_ID (ids are never
//    reused, so old data files never bind to a different column);
//  - a new field directly inside an existing struct must be optional, since v2 has no default
//    values for rows written before it existed;
//  - a kept field keeps its kind, may only widen its type (int->long, float->double,
//    decimal(P,S)->decimal(P',S) with P' >= P) and may not turn from optional to required.
void validate_schema_evolution(const Schema& current, const Schema& next, std::int32_t last_column_id);

}  // namespace binberg::iceberg
