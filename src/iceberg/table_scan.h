#pragma once

// Reading a table as of a snapshot (spec "Scan Planning"): the live data and delete files of its
// manifests, and its rows with position and equality deletes applied by the sequence-number rules:
//   - a position delete applies to a data file it names whose data sequence number is <= its own;
//   - an equality delete applies to a data file whose data sequence number is < its own.
// Files whose data sequence number is unknown are rejected rather than guessed.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "iceberg/arrow_rows.h"
#include "iceberg/detail/data_file_writer.h"
#include "iceberg/manifest.h"
#include "iceberg/table_metadata.h"

namespace binberg::iceberg {

struct LiveFile {
  DataFile file;
  std::int64_t data_sequence_number = 0;
  std::int32_t spec_id = 0;
};

struct ScanPlan {
  std::optional<std::int64_t> snapshot_id;  // nullopt: the table has no snapshot, nothing to read
  std::vector<LiveFile> data_files;
  std::vector<LiveFile> delete_files;
};

// The files of SNAPSHOT_ID (default: the current snapshot). Throws Error naming the snapshot or
// manifest that cannot be read.
ScanPlan plan_scan(const TableMetadata& metadata, std::optional<std::int64_t> snapshot_id = std::nullopt);

// Calls VISIT for every live row of the plan with its data file and position in it. Rows are
// shaped by PROJECTION, a schema whose fields are matched to the files' columns by field id.
using RowVisitor = std::function<void(const Row& row, const LiveFile& file, std::int64_t position)>;
void scan_rows(const ScanPlan& plan, const Schema& projection, const RowVisitor& visit);

// The (file_path, pos) rows of a position delete file.
std::vector<PositionDelete> read_position_deletes(const DataFile& file);

// All live rows of the current snapshot in the current schema.
std::vector<Row> read_table_rows(const TableMetadata& metadata);

}  // namespace binberg::iceberg
