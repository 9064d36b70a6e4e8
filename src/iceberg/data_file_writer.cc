#include "iceberg/detail/data_file_writer.h"

#include <algorithm>

#include "core/error.h"
#include "iceberg/metadata_file.h"

namespace binberg::iceberg {
namespace {

DataFile describe(FileContent content, const std::string& location, std::vector<Literal> partition,
                  const ParquetFileInfo& info, ColumnMetrics metrics) {
  DataFile file;
  file.content = content;
  file.file_path = location;
  file.partition = std::move(partition);
  file.record_count = info.rows;
  file.file_size_in_bytes = info.file_size_bytes;
  file.column_sizes = info.column_sizes;
  file.value_counts = std::move(metrics.value_counts);
  file.null_value_counts = std::move(metrics.null_value_counts);
  file.nan_value_counts = std::move(metrics.nan_value_counts);
  file.lower_bounds = std::move(metrics.lower_bounds);
  file.upper_bounds = std::move(metrics.upper_bounds);
  file.split_offsets = info.split_offsets;
  return file;
}

ParquetFileInfo write_rows(const std::string& location, const Schema& schema, RowView rows,
                           const DataFileOptions& options) {
  return write_parquet(local_path(location).string(), *rows_to_arrow(schema, rows), options.parquet);
}

}  // namespace

DataFile write_data_file(const std::string& location, const Schema& schema, std::vector<Literal> partition,
                         RowView rows, const DataFileOptions& options) {
  const ParquetFileInfo info = write_rows(location, schema, rows, options);
  return describe(FileContent::kData, location, std::move(partition), info,
                  compute_column_metrics(schema, rows, options.bound_truncate_length));
}

const Schema& position_delete_schema() {
  static const Schema schema =
      Schema::of_metadata_columns({NestedField{kDeleteFilePathFieldId, "file_path", true, string_type(), std::nullopt},
                                   NestedField{kDeletePosFieldId, "pos", true, long_type(), std::nullopt}});
  return schema;
}

DataFile write_position_delete_file(const std::string& location, std::vector<Literal> partition,
                                    std::vector<PositionDelete> deletes, const DataFileOptions& options) {
  std::sort(deletes.begin(), deletes.end());
  std::vector<Row> rows;
  rows.reserve(deletes.size());
  for (auto& entry : deletes) rows.push_back(Row{std::move(entry.file_path), entry.pos});
  const ParquetFileInfo info = write_rows(location, position_delete_schema(), rows, options);
  // Full-length file_path bounds: readers tell a delete file that names one data file by equal
  // bounds, which truncation would break.
  return describe(FileContent::kPositionDeletes, location, std::move(partition), info,
                  compute_column_metrics(position_delete_schema(), rows, std::size_t{1} << 20));
}

}  // namespace binberg::iceberg
