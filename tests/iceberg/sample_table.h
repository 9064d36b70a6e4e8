#pragma once

// One table definition used by the metadata tests: every primitive type, nested struct/list/map,
// identifier fields, a partition spec and a sort order; and the flat table the manifest tests
// partition by every transform.

#include <string>

#include "iceberg/manifest.h"
#include "iceberg/table_metadata.h"

namespace binberg::iceberg::test_tables {

Schema sample_schema();
PartitionSpec sample_spec();
SortOrder sample_sort_order();
// A new table at LOCATION created at 1700000000000 ms.
TableMetadata sample_metadata(const std::string& location);
// The next snapshot on top of the current one, at timestamp 1700000000000 + 1000 * sequence number.
Snapshot next_snapshot(const TableMetadata& metadata, std::int64_t snapshot_id);

// One optional column of every primitive type, field ids 1..15: b boolean, i int, l long, f float,
// d double, dec decimal(9, 2), dt date, tm time, ts timestamp, tstz timestamptz, s string, u uuid,
// fx fixed[3], bin binary, big decimal(38, 10).
Schema all_types_schema();
// Spec SPEC_ID over all_types_schema(): identity of every column (field ids 1000..1014, named as
// the column followed by IDENTITY_SUFFIX), then every other transform (bucket, truncate of a string
// and of a decimal, year, month, day, hour, void) and an identity whose name is not an Avro name.
PartitionSpec all_transforms_spec(std::int32_t spec_id, const std::string& identity_suffix = "");
// Sets every column statistic a manifest entry records (sizes, counts, bounds of columns i and s,
// key metadata, split offsets, sort order) on FILE, a data file of all_types_schema().
void set_sample_statistics(DataFile& file);

}  // namespace binberg::iceberg::test_tables
