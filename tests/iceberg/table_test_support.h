#pragma once

// Shared pieces of the table-layer tests: a keyed test table, a deterministic change generator with
// its expected final state, and the canonical row form table_reader_tool.py prints, so that
// binberg's reader, pyiceberg and DuckDB can be compared exactly.

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "iceberg/arrow_rows.h"
#include "iceberg/catalog.h"
#include "iceberg/table_writer.h"

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

}  // namespace binberg::iceberg::test_tables
