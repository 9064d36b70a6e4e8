#include "table_test_support.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "iceberg/canonical_row.h"
#include "iceberg/table_scan.h"
#include "support/test_services.h"  // run_command

namespace binberg::iceberg::test_tables {
Schema keyed_schema() {
  return Schema(0,
                {NestedField{1, "id", true, long_type(), std::nullopt},
                 NestedField{2, "name", false, string_type(), std::nullopt},
                 NestedField{3, "amount", false, decimal_type(12, 2), std::nullopt},
                 NestedField{4, "day", false, date_type(), std::nullopt},
                 NestedField{5, "updated_at", false, timestamptz_type(), std::nullopt},
                 NestedField{6, "score", false, double_type(), std::nullopt},
                 NestedField{7, "payload", false, binary_type(), std::nullopt}},
                {1});
}

Row keyed_row(std::int64_t id, std::uint64_t version) {
  const auto v = static_cast<std::int64_t>(version);
  Row row{id,
          fmt::format("name-{}-v{}-{}", id, version, std::string(static_cast<std::size_t>(v % 20), 'x')),
          Decimal{static_cast<Int128>(id * 100 + v) * (v % 3 == 0 ? -1 : 1)},
          static_cast<std::int32_t>(19000 + (id % 7)),
          std::int64_t{1700000000000000} + v * 1000003,
          static_cast<double>(v) / 7.0,
          Bytes{static_cast<std::uint8_t>(id), static_cast<std::uint8_t>(version), 0xFF}};
  if (version % 5 == 0) row[2] = std::monostate{};  // some nulls
  if (version % 7 == 0) row[1] = std::monostate{};
  return row;
}

CanonicalRow canonical_row(const Schema& schema, const Row& row) {
  CanonicalRow cells;
  for (std::size_t c = 0; c < row.size(); ++c) cells.push_back(canonical_text(*schema.fields()[c].type, row[c]));
  return cells;
}

std::vector<CanonicalRow> canonical_rows(const Schema& schema, const std::vector<Row>& rows) {
  std::vector<CanonicalRow> result;
  for (const Row& row : rows) result.push_back(canonical_row(schema, row));
  std::sort(result.begin(), result.end());
  return result;
}

std::vector<CanonicalRow> tool_rows(const std::string& arguments) {
  const std::string script = std::string(BINBERG_ICEBERG_TEST_DIR) + "/table_reader_tool.py";
  const auto json = nlohmann::json::parse(
      binberg::testing::run_command(fmt::format("'{}' '{}' {}", BINBERG_PYTHON, script, arguments)));
  std::vector<CanonicalRow> rows;
  for (const auto& row : json.at("rows")) {
    CanonicalRow cells;
    for (const auto& cell : row) {
      cells.emplace_back(cell.is_null() ? std::nullopt : std::optional<std::string>(cell.get<std::string>()));
    }
    rows.push_back(std::move(cells));
  }
  if (json.at("count").get<std::size_t>() != rows.size()) throw std::runtime_error("tool count != rows");
  std::sort(rows.begin(), rows.end());
  return rows;
}

void ChangeGenerator::apply(TableWriter* writer, int count) {
  std::uniform_int_distribution<std::int64_t> key(first_key_, first_key_ + key_space_ - 1);
  std::uniform_int_distribution<int> kind(0, 9);
  for (int i = 0; i < count; ++i) {
    const std::int64_t id = key(random_);
    if (kind(random_) == 0) {
      if (writer != nullptr) {
        writer->remove(Row{id, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{},
                           std::monostate{}});
      }
      expected_.erase(id);
    } else {
      Row row = keyed_row(id, ++version_);
      expected_[id] = row;
      if (writer != nullptr) writer->upsert(std::move(row));
    }
  }
}

std::vector<Row> ChangeGenerator::expected_rows() const {
  std::vector<Row> rows;
  for (const auto& [id, row] : expected_) rows.push_back(row);
  return rows;
}

CatalogOptions sqlite_catalog_options(const std::string& dir) {
  CatalogOptions options;
  options.name = "binberg";
  options.uri = "sqlite:///" + dir + "/catalog.db";
  options.warehouse = dir + "/warehouse";
  return options;
}

void TableTest::SetUp() {
  options_ = sqlite_catalog_options(dir_.path().string());
  catalog_ = open_catalog(options_);
  catalog_->create_namespace("db");
}

LoadedTable TableTest::create(const std::string& name, const PartitionSpec& spec) {
  return catalog_->create_table(TableIdentifier{"db", name}, keyed_schema(), spec, SortOrder::unsorted(), {});
}

void TableTest::commit(TableWriter& writer, const std::string& commit_id) {
  PreparedCommit prepared = writer.prepare(commit_id, {{"binberg.source-position", commit_id}}, kNow);
  commit_tables(*catalog_, {&writer}, {prepared});
}

void TableTest::expect_all_readers_see(const std::string& name, const std::vector<Row>& expected) {
  const LoadedTable table = catalog_->load_table(TableIdentifier{"db", name});
  const auto want = canonical_rows(keyed_schema(), expected);
  EXPECT_EQ(canonical_rows(keyed_schema(), read_table_rows(table.metadata)), want) << "binberg reader";
  EXPECT_EQ(tool_rows(fmt::format("rows pyiceberg '{}' '{}' db.{}", options_.uri, options_.warehouse, name)), want)
      << "pyiceberg";
  EXPECT_EQ(tool_rows(fmt::format("rows duckdb '{}'", table.metadata_location)), want) << "duckdb";
}

}  // namespace binberg::iceberg::test_tables
