#include "iceberg/parquet_file.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_reader.h>
#include <parquet/properties.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/failpoint.h"
#include "iceberg/detail/durable_file.h"

namespace binberg::iceberg {
namespace {

constexpr const char* kFieldIdKey = "PARQUET:field_id";

template <typename T>
T check(arrow::Result<T> result, const char* what, const std::string& path) {
  if (!result.ok()) fail("parquet {}: {} failed: {}", path, what, result.status().ToString());
  return std::move(result).ValueOrDie();
}

void check(const arrow::Status& status, const char* what, const std::string& path) {
  if (!status.ok()) fail("parquet {}: {} failed: {}", path, what, status.ToString());
}

void collect_leaves(const parquet::arrow::SchemaField& field, std::vector<int>& leaves) {
  if (field.is_leaf()) leaves.push_back(field.column_index);
  for (const auto& child : field.children) collect_leaves(child, leaves);
}

}  // namespace

std::shared_ptr<arrow::Field> field_with_id(const std::string& name, std::shared_ptr<arrow::DataType> type,
                                            Nullable nullable, std::int32_t field_id) {
  return arrow::field(name, std::move(type), nullable == Nullable::kYes,
                      arrow::key_value_metadata({kFieldIdKey}, {std::to_string(field_id)}));
}

ParquetFileInfo write_parquet(const std::string& path, const arrow::Table& table, const ParquetWriteOptions& options) {
  for (const auto& field : table.schema()->fields()) {
    if (!field->HasMetadata() || !field->metadata()->Contains(kFieldIdKey)) {
      fail("parquet {}: column '{}' has no {} (Iceberg needs a field id on every column)", path, field->name(),
           kFieldIdKey);
    }
  }
  if (std::filesystem::exists(path)) fail("parquet {}: file exists already; data files are never overwritten", path);

  auto properties = parquet::WriterProperties::Builder()
                        .compression(parquet::Compression::ZSTD)
                        ->compression_level(options.zstd_level)
                        ->max_row_group_length(options.row_group_rows)
                        ->created_by("binberg")
                        ->build();
  auto arrow_properties = parquet::ArrowWriterProperties::Builder().store_schema()->build();
  durable::create_directories(std::filesystem::path(path).parent_path());
  auto sink = check(arrow::io::FileOutputStream::Open(path), "open", path);
  check(parquet::arrow::WriteTable(table, arrow::default_memory_pool(), sink, options.row_group_rows, properties,
                                   arrow_properties),
        "write", path);
  failpoint::hit("iceberg.parquet.before_close");
  check(sink->Close(), "close", path);
  // Arrow's stream cannot fsync: the file is synced by path once closed. A write-back error not yet
  // reported to anyone is reported to this fsync too (Linux 4.16+), and it costs the same as an
  // fsync of Arrow's descriptor (one open and close more, measured against the fsync itself).
  durable::sync_written_file(path, fmt::format("parquet {}", path));

  ParquetFileInfo info{path, table.num_rows(), static_cast<std::int64_t>(std::filesystem::file_size(path)), {}, {}};
  const auto metadata = parquet::ReadMetaData(check(arrow::io::ReadableFile::Open(path), "reopen", path));
  const auto& fields = table.schema()->fields();
  for (int g = 0; g < metadata->num_row_groups(); ++g) {
    const auto row_group = metadata->RowGroup(g);
    if (row_group->num_columns() > 0) info.split_offsets.push_back(row_group->ColumnChunk(0)->file_offset());
    // A flat schema has one leaf column per field, in field order.
    for (int c = 0; c < row_group->num_columns() && c < static_cast<int>(fields.size()); ++c) {
      const std::int32_t id = std::stoi(fields[static_cast<std::size_t>(c)]->metadata()->Get(kFieldIdKey).ValueOrDie());
      info.column_sizes[id] += row_group->ColumnChunk(c)->total_compressed_size();
    }
  }
  return info;
}

std::shared_ptr<arrow::Table> read_parquet(const std::string& path) {
  auto input = check(arrow::io::ReadableFile::Open(path), "open", path);
  auto reader = check(parquet::arrow::OpenFile(input, arrow::default_memory_pool()), "open reader", path);
  return check(reader->ReadTable(), "read", path);
}

std::shared_ptr<arrow::Table> read_parquet_columns(const std::string& path,
                                                   const std::vector<std::int32_t>& field_ids) {
  auto input = check(arrow::io::ReadableFile::Open(path), "open", path);
  auto reader = check(parquet::arrow::OpenFile(input, arrow::default_memory_pool()), "open reader", path);
  std::vector<int> leaves;
  for (const auto& top : reader->manifest().schema_fields) {
    const auto& metadata = top.field->metadata();
    if (metadata == nullptr || !metadata->Contains(kFieldIdKey)) continue;
    const std::int32_t id = std::stoi(metadata->Get(kFieldIdKey).ValueOrDie());
    if (std::find(field_ids.begin(), field_ids.end(), id) != field_ids.end()) collect_leaves(top, leaves);
  }
  return check(reader->ReadTable(leaves), "read", path);
}

}  // namespace binberg::iceberg
