// Parquet files written by binberg (Arrow C++) are read back by an independent reader, pyarrow in
// the project venv, which must see the Iceberg field ids and the values.

#include "iceberg/parquet_file.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "support/temp_dir.h"
#include "support/test_services.h"  // run_command

namespace binberg::iceberg {
namespace {

std::shared_ptr<arrow::Table> sample_table(bool with_ids) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  EXPECT_TRUE(ids.AppendValues({1, 2, 9007199254740993}).ok());
  EXPECT_TRUE(names.Append("a").ok());
  EXPECT_TRUE(names.AppendNull().ok());
  EXPECT_TRUE(names.Append("\xF0\x9F\x98\x80").ok());
  auto schema =
      with_ids ? arrow::schema({field_with_id("id", arrow::int64(), Nullable::kNo, 1),
                                field_with_id("name", arrow::utf8(), Nullable::kYes, 7)})
               : arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("name", arrow::utf8(), true)});
  return arrow::Table::Make(schema, {ids.Finish().ValueOrDie(), names.Finish().ValueOrDie()});
}

TEST(ParquetFileTest, PyarrowReadsFieldIdsAndValues) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "data.parquet").string();
  auto info = write_parquet(path, *sample_table(true));
  EXPECT_EQ(info.rows, 3);
  EXPECT_GT(info.file_size_bytes, 0);

  const std::string script =
      "import sys, json, pyarrow.parquet as pq\n"
      "f = pq.ParquetFile(sys.argv[1])\n"
      "schema = f.schema_arrow\n"
      "ids = {fld.name: int(fld.metadata[b'PARQUET:field_id']) for fld in schema}\n"
      "codec = f.metadata.row_group(0).column(0).compression\n"
      "print(json.dumps({'ids': ids, 'rows': f.read().to_pylist(), 'codec': codec}, sort_keys=True))\n";
  const auto script_path = dir.path() / "read.py";
  std::ofstream(script_path) << script;
  const std::string output =
      testing::run_command(fmt::format("'{}' '{}' '{}'", BINBERG_PYTHON, script_path.string(), path));
  EXPECT_EQ(output,
            "{\"codec\": \"ZSTD\", \"ids\": {\"id\": 1, \"name\": 7}, \"rows\": [{\"id\": 1, \"name\": \"a\"}, "
            "{\"id\": 2, \"name\": null}, {\"id\": 9007199254740993, \"name\": \"\\ud83d\\ude00\"}]}\n");
}

TEST(ParquetFileTest, ArrowReadsBackWhatWasWritten) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "data.parquet").string();
  auto table = sample_table(true);
  write_parquet(path, *table);
  EXPECT_TRUE(read_parquet(path)->Equals(*table));
}

TEST(ParquetFileTest, ColumnWithoutFieldIdIsRefused) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "data.parquet").string();
  try {
    write_parquet(path, *sample_table(false));
    FAIL() << "wrote a column without a field id";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'id'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ParquetFileTest, ExistingFileIsNeverOverwritten) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "data.parquet").string();
  write_parquet(path, *sample_table(true));
  const auto size = std::filesystem::file_size(path);
  EXPECT_THROW(write_parquet(path, *sample_table(true)), Error);
  EXPECT_EQ(std::filesystem::file_size(path), size);
}

}  // namespace
}  // namespace binberg::iceberg
