#pragma once

// Writing one data file or one position delete file and describing it for a manifest: its path,
// partition, counts, sizes and column metrics.

#include <cstdint>
#include <string>
#include <vector>

#include "iceberg/arrow_rows.h"
#include "iceberg/column_metrics.h"
#include "iceberg/manifest.h"
#include "iceberg/parquet_file.h"

namespace binberg::iceberg {

// Reserved field ids of position delete files (spec "Position Delete Files").
inline constexpr std::int32_t kDeleteFilePathFieldId = 2147483546;
inline constexpr std::int32_t kDeletePosFieldId = 2147483545;

struct DataFileOptions {
  ParquetWriteOptions parquet;
  std::size_t bound_truncate_length = kDefaultBoundTruncateLength;
};

// Writes ROWS (all in PARTITION) as one Parquet file at LOCATION (path or file:/ URI, which must
// not exist) and returns its data_file record.
DataFile write_data_file(const std::string& location, const Schema& schema, std::vector<Literal> partition,
                         RowView rows, const DataFileOptions& options = {});

struct PositionDelete {
  std::string file_path;
  std::int64_t pos = 0;
  friend auto operator<=>(const PositionDelete&, const PositionDelete&) = default;
};

// {file_path: string (2147483546), pos: long (2147483545)}, both required.
const Schema& position_delete_schema();

// Writes DELETES, sorted by file_path then pos as the spec requires, as one position delete file.
DataFile write_position_delete_file(const std::string& location, std::vector<Literal> partition,
                                    std::vector<PositionDelete> deletes, const DataFileOptions& options = {});

}  // namespace binberg::iceberg
