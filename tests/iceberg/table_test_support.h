#pragma once

// Shared pieces of the table-layer tests: a keyed test table, a deterministic change generator with
// its expected final state, and the canonical row form table_reader_tool.py prints, so that
// binberg's reader, pyiceberg and DuckDB can be compared exactly.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "iceberg/arrow_rows.h"
#include "iceberg/catalog.h"
#include "iceberg/table_writer.h"
#include "support/temp_dir.h"

namespace binberg::iceberg::test_tables {

// id long (identifier), name string, amount decimal(12,2), day date, updated_at timestamptz,
// score double, payload binary.
Schema keyed_schema();
Row keyed_row(std::int64_t id, std::uint64_t version);

using CanonicalRow = std::vector<std::optional<std::string>>;
CanonicalRow canonical_row(const Schema& schema, const Row& row);
// Sorted, as tool_rows() sorts what the tool prints.
std::vector<CanonicalRow> canonical_rows(const Schema& schema, const std::vector<Row>& rows);
// Runs table_reader_tool.py with ARGUMENTS and parses its rows.
std::vector<CanonicalRow> tool_rows(const std::string& arguments);

// Applies a random mix of inserts, updates and deletes to a writer and to an expected state.
class ChangeGenerator {
 public:
  // Keys FIRST_KEY .. FIRST_KEY + KEY_SPACE - 1.
  ChangeGenerator(std::uint64_t seed, std::int64_t key_space, std::int64_t first_key = 1)
      : random_(seed), key_space_(key_space), first_key_(first_key) {}
  // COUNT changes: one in ten a delete, the rest upserts of a new version. Without a WRITER the
  // changes only move the expected state (to replay what another process wrote).
  void apply(TableWriter* writer, int count);
  void apply(TableWriter& writer, int count) { apply(&writer, count); }
  std::vector<Row> expected_rows() const;
  const std::map<std::int64_t, Row>& expected() const { return expected_; }

 private:
  std::mt19937_64 random_;
  std::int64_t key_space_;
  std::int64_t first_key_;
  std::uint64_t version_ = 0;
  std::map<std::int64_t, Row> expected_;
};

// A SQLite catalog in DIR with namespace "db".
CatalogOptions sqlite_catalog_options(const std::string& dir);

// A fresh SQLite catalog with namespace "db" in a temporary directory, and the checks the
// table-layer tests share.
class TableTest : public ::testing::Test {
 protected:
  static constexpr std::int64_t kNow = 1'750'000'000'000;

  void SetUp() override;
  LoadedTable create(const std::string& name, const PartitionSpec& spec = PartitionSpec::unpartitioned());
  // Prepares and commits WRITER's batch, with COMMIT_ID also as binberg.source-position.
  void commit(TableWriter& writer, const std::string& commit_id);
  // binberg, pyiceberg and DuckDB all read EXPECTED from table db.NAME.
  void expect_all_readers_see(const std::string& name, const std::vector<Row>& expected);

  binberg::testing::TempDir dir_;
  CatalogOptions options_;
  std::unique_ptr<Catalog> catalog_;
};

}  // namespace binberg::iceberg::test_tables
