#pragma once

// Parquet data files through Arrow/Parquet C++. Iceberg maps columns by field id, not by name, so
// every column written carries its id as the Arrow field metadata key PARQUET:field_id.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace arrow {
class DataType;
class Field;
class Table;
}  // namespace arrow

namespace binberg::iceberg {

struct ParquetWriteOptions {
  std::int64_t row_group_rows = 1 << 20;
  int zstd_level = 3;
};

struct ParquetFileInfo {
  std::string path;
  std::int64_t rows = 0;
  std::int64_t file_size_bytes = 0;
  // Compressed bytes of each top-level column by field id, and each row group's file offset: the
  // column_sizes and split_offsets of the manifest entry.
  std::map<std::int32_t, std::int64_t> column_sizes;
  std::vector<std::int64_t> split_offsets;
};

enum class Nullable { kNo, kYes };

// An Arrow field carrying its Iceberg field id.
std::shared_ptr<arrow::Field> field_with_id(const std::string& name, std::shared_ptr<arrow::DataType> type,
                                            Nullable nullable, std::int32_t field_id);

// Writes TABLE as one zstd-compressed Parquet file at PATH (replacing nothing: an existing file is
// an error), durably: its directory is created if missing, and it returns only once the file and
// its directory entries are synced (detail/durable_file.h). Throws Error if a column lacks a field
// id or the write fails.
ParquetFileInfo write_parquet(const std::string& path, const arrow::Table& table,
                              const ParquetWriteOptions& options = {});

std::shared_ptr<arrow::Table> read_parquet(const std::string& path);
// Only the top-level columns with these field ids (those the file has), with their field ids.
std::shared_ptr<arrow::Table> read_parquet_columns(const std::string& path, const std::vector<std::int32_t>& field_ids);

}  // namespace binberg::iceberg
