#pragma once

// One table definition used by the metadata tests: every primitive type, nested struct/list/map,
// identifier fields, a partition spec and a sort order.

#include <string>

#include "iceberg/table_metadata.h"

namespace binberg::iceberg::test_tables {

Schema sample_schema();
PartitionSpec sample_spec();
SortOrder sample_sort_order();
// A new table at LOCATION created at 1700000000000 ms.
TableMetadata sample_metadata(const std::string& location);
// The next snapshot on top of the current one, at timestamp 1700000000000 + 1000 * sequence number.
Snapshot next_snapshot(const TableMetadata& metadata, std::int64_t snapshot_id);

}  // namespace binberg::iceberg::test_tables
