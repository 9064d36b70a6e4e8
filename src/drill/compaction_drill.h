#pragma once

// small-file-rewrite (docs/drills.md): `binberg table compact` on path A's current-state tables
// while `binberg replicate` goes on committing every 200 ms, measured before and after.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "drill/drill_run.h"
#include "iceberg/table_metadata.h"

namespace binberg::drill {

// What a table's snapshot is made of, and what planning a scan of it costs.
struct TableShape {
  std::int64_t snapshot_id = 0;
  std::size_t data_files = 0, delete_files = 0, manifests = 0;
  std::int64_t bytes = 0;     // of its live data and delete files
  double plan_ms_median = 0;  // of kTimedPlans scan plans
};

inline constexpr int kTimedPlans = 7;

// SNAPSHOT_ID of METADATA (default: the current snapshot), its scan planned kTimedPlans times.
TableShape measure_table(const iceberg::TableMetadata& metadata, std::optional<std::int64_t> snapshot_id = {});

void under_compaction(DrillRun& run);

}  // namespace binberg::drill
