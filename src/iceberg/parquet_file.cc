#include "iceberg/parquet_file.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <filesystem>

#include "core/error.h"
#include "core/failpoint.h"

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

}  // namespace

std::shared_ptr<arrow::Field> field_with_id(const std::string& name, std::shared_ptr<arrow::DataType> type,
                                            bool nullable, std::int32_t field_id) {
  return arrow::field(name, std::move(type), nullable,
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
  auto sink = check(arrow::io::FileOutputStream::Open(path), "open", path);
  check(parquet::arrow::WriteTable(table, arrow::default_memory_pool(), sink, options.row_group_rows, properties,
                                   arrow_properties),
        "write", path);
  failpoint::hit("iceberg.parquet.before_close");
  check(sink->Close(), "close", path);
  return ParquetFileInfo{path, table.num_rows(), static_cast<std::int64_t>(std::filesystem::file_size(path))};
}

std::shared_ptr<arrow::Table> read_parquet(const std::string& path) {
  auto input = check(arrow::io::ReadableFile::Open(path), "open", path);
  auto reader = check(parquet::arrow::OpenFile(input, arrow::default_memory_pool()), "open reader", path);
  return check(reader->ReadTable(), "read", path);
}

}  // namespace binberg::iceberg
