// The table layer end to end on a SQLite catalog: binberg's upsert writer against its own reader and
// two independent ones (pyiceberg through the same catalog, DuckDB through the metadata file).

#include "iceberg/table_writer.h"

#include <gtest/gtest.h>

#include "iceberg/table_scan.h"
#include "table_test_support.h"

namespace binberg::iceberg {
namespace {

using test_tables::canonical_rows;
using test_tables::ChangeGenerator;
using test_tables::keyed_row;
using test_tables::keyed_schema;
using test_tables::tool_rows;

class TableWriterTest : public test_tables::TableTest {};

TEST_F(TableWriterTest, UpsertsAndDeletesAcrossCommitsAgreeWithPyicebergAndDuckdb) {
  TableWriter writer(create("orders"), WriteMode::kUpsert);
  ChangeGenerator changes(42, 300);
  for (int commit_number = 0; commit_number < 6; ++commit_number) {
    changes.apply(writer, 250);
    commit(writer, fmt::format("c{}", commit_number));
    ASSERT_EQ(canonical_rows(keyed_schema(), read_table_rows(writer.table().metadata)),
              canonical_rows(keyed_schema(), changes.expected_rows()))
        << "after commit " << commit_number;
    EXPECT_EQ(writer.index().size(), changes.expected().size());
  }
  const Snapshot* last = writer.table().metadata.current_snapshot();
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->summary.at(kCommitIdProperty), "c5");
  EXPECT_EQ(last->summary.at("binberg.source-position"), "c5");
  EXPECT_GT(std::stoll(last->summary.at("added-position-deletes")), 0);
  expect_all_readers_see("orders", changes.expected_rows());
}

TEST_F(TableWriterTest, ReopenedWriterRebuildsTheIndexAndKeepsOneRowPerKey) {
  ChangeGenerator changes(7, 100);
  {
    TableWriter writer(create("items"), WriteMode::kUpsert);
    changes.apply(writer, 300);
    commit(writer, "first");
  }
  TableWriter reopened(catalog_->load_table(TableIdentifier{"db", "items"}), WriteMode::kUpsert);
  EXPECT_EQ(reopened.index().size(), changes.expected().size());
  changes.apply(reopened, 300);
  commit(reopened, "second");
  expect_all_readers_see("items", changes.expected_rows());
}

TEST_F(TableWriterTest, RowsReplacedWithinABatchAreNotWritten) {
  TableWriter writer(create("hot"), WriteMode::kUpsert);
  for (std::uint64_t version = 1; version <= 50; ++version) writer.upsert(keyed_row(1, version));
  writer.upsert(keyed_row(2, 1));
  writer.remove(keyed_row(2, 1));
  PreparedCommit prepared = writer.prepare("batch", {}, kNow);
  EXPECT_EQ(prepared.stats.added_rows, 1);
  EXPECT_EQ(prepared.stats.deleted_rows, 0);
  commit_tables(*catalog_, {&writer}, {prepared});
  expect_all_readers_see("hot", {keyed_row(1, 50)});
}

// A batch bigger than the writer's memory bound is written to data files as it grows; rows it
// replaces after writing them get position deletes in the same snapshot. Each commit still holds
// its whole batch, and every reader (and a rebuilt index) sees exactly one row per key.
TEST_F(TableWriterTest, BatchLargerThanTheMemoryBoundSpillsAndStaysOneSnapshot) {
  TableWriterOptions options;
  options.max_buffered_bytes = 16 << 10;
  TableWriter writer(create("spilled"), WriteMode::kUpsert, options);
  ChangeGenerator changes(11, 400);
  std::size_t spills = 0;
  for (int commit_number = 0; commit_number < 3; ++commit_number) {
    changes.apply(writer, 1500);
    EXPECT_LE(writer.buffered_bytes(), options.max_buffered_bytes);
    spills += writer.spills();
    const std::size_t snapshots = writer.table().metadata.snapshots.size();
    commit(writer, fmt::format("c{}", commit_number));
    EXPECT_EQ(writer.table().metadata.snapshots.size(), snapshots + 1);
    ASSERT_EQ(canonical_rows(keyed_schema(), read_table_rows(writer.table().metadata)),
              canonical_rows(keyed_schema(), changes.expected_rows()))
        << "after commit " << commit_number;
    EXPECT_EQ(writer.index().size(), changes.expected().size());
  }
  EXPECT_GE(spills, 10u) << "the bound should have been reached many times";
  const Snapshot* last = writer.table().metadata.current_snapshot();
  EXPECT_GT(std::stoll(last->summary.at("added-data-files")), 5);
  expect_all_readers_see("spilled", changes.expected_rows());

  TableWriter reopened(catalog_->load_table(TableIdentifier{"db", "spilled"}), WriteMode::kUpsert, options);
  EXPECT_EQ(reopened.index().size(), changes.expected().size());
  changes.apply(reopened, 1500);
  commit(reopened, "after-reopen");
  expect_all_readers_see("spilled", changes.expected_rows());
}

TEST_F(TableWriterTest, AppendBatchLargerThanTheMemoryBoundKeepsEveryRowInOneSnapshot) {
  TableWriterOptions options;
  options.max_buffered_bytes = 8 << 10;
  TableWriter writer(create("log"), WriteMode::kAppend, options);
  std::vector<Row> expected;
  for (std::int64_t id = 1; id <= 600; ++id) {
    expected.push_back(keyed_row(id, 1));
    writer.append(keyed_row(id, 1));
  }
  EXPECT_GT(writer.spills(), 5u);
  commit(writer, "one");
  EXPECT_EQ(writer.table().metadata.snapshots.size(), 1u);
  expect_all_readers_see("log", expected);
}

// Schema evolution between commits: a renamed column keeps its field id, an added one reads null
// in rows written before it, a dropped one disappears, a widened decimal reads as the wider type;
// the primary-key index survives, so upserts still replace the old rows, and every reader agrees.
// A writer whose primary-key index outgrew its bound locates the keys a batch changes at commit,
// by scanning key columns: the table ends up exactly as an indexed writer leaves it.
TEST_F(TableWriterTest, IndexBeyondItsBoundLocatesKeysAtCommitWithTheSameResult) {
  TableWriterOptions bounded;
  bounded.max_index_bytes = 1;
  ChangeGenerator scanned_changes(21, 300), indexed_changes(21, 300);
  TableWriter scanned(create("scanned"), WriteMode::kUpsert, bounded);
  TableWriter indexed(create("indexed"), WriteMode::kUpsert);
  for (int commit_number = 0; commit_number < 5; ++commit_number) {
    scanned_changes.apply(scanned, 250);
    indexed_changes.apply(indexed, 250);
    commit(scanned, fmt::format("s{}", commit_number));
    commit(indexed, fmt::format("i{}", commit_number));
  }
  EXPECT_TRUE(scanned.locates_keys_by_scan());
  EXPECT_FALSE(indexed.locates_keys_by_scan());
  EXPECT_EQ(scanned.index().size(), 0u) << "no key is kept between commits";
  EXPECT_GT(scanned.files_scanned_for_keys(), 0);
  EXPECT_EQ(scanned.absent_key_deletes(), indexed.absent_key_deletes());
  EXPECT_EQ(canonical_rows(keyed_schema(), read_table_rows(scanned.table().metadata)),
            canonical_rows(keyed_schema(), read_table_rows(indexed.table().metadata)));
  expect_all_readers_see("scanned", scanned_changes.expected_rows());
  // An indexed writer reopened on it finds one row per key: nothing was left undeleted.
  const TableWriter reopened(catalog_->load_table(TableIdentifier{"db", "scanned"}), WriteMode::kUpsert);
  EXPECT_EQ(reopened.index().size(), scanned_changes.expected().size());
}

// With one integer key, files whose key bounds hold none of the changed keys are not read.
TEST_F(TableWriterTest, KeyScanSkipsFilesWhoseBoundsExcludeTheChangedKeys) {
  TableWriterOptions bounded;
  bounded.max_index_bytes = 1;
  TableWriter writer(create("ranges"), WriteMode::kUpsert, bounded);
  std::vector<Row> expected;
  for (std::int64_t first : {1, 1001, 2001}) {
    for (std::int64_t id = first; id < first + 1000; ++id) writer.upsert(keyed_row(id, 1));
    commit(writer, fmt::format("range-{}", first));
  }
  ASSERT_TRUE(writer.locates_keys_by_scan());
  const std::int64_t before = writer.files_scanned_for_keys();
  writer.upsert(keyed_row(1500, 2));
  writer.remove(keyed_row(1501, 1));
  commit(writer, "one-range");
  EXPECT_EQ(writer.files_scanned_for_keys() - before, 1) << "only the file of keys 1001..2000";
  for (std::int64_t id = 1; id <= 3000; ++id) {
    if (id != 1501) expected.push_back(keyed_row(id, id == 1500 ? 2 : 1));
  }
  expect_all_readers_see("ranges", expected);
}

TEST_F(TableWriterTest, EvolvedSchemaKeepsTheIndexAndEveryReaderAgrees) {
  TableWriter writer(create("evolving"), WriteMode::kUpsert);
  for (std::int64_t id = 1; id <= 20; ++id) writer.upsert(keyed_row(id, 1));
  commit(writer, "before");
  const Schema evolved(0,
                       {NestedField{1, "id", true, long_type(), std::nullopt},
                        NestedField{2, "title", false, string_type(), std::nullopt},
                        NestedField{8, "tier", false, int_type(), std::nullopt},
                        NestedField{3, "amount", false, decimal_type(16, 2), std::nullopt},
                        NestedField{4, "day", false, date_type(), std::nullopt},
                        NestedField{5, "updated_at", false, timestamptz_type(), std::nullopt},
                        NestedField{6, "score", false, double_type(), std::nullopt}},
                       {1});
  writer.evolve_schema(evolved, {{"binberg.note", "evolved"}});
  const auto evolved_row = [](std::int64_t id, std::uint64_t version, std::optional<std::int32_t> tier) {
    Row row = keyed_row(id, version);
    row.pop_back();  // payload dropped
    row.insert(row.begin() + 2, tier ? Literal{*tier} : Literal{std::monostate{}});
    return row;
  };
  for (std::int64_t id = 1; id <= 5; ++id) writer.upsert(evolved_row(id, 2, static_cast<std::int32_t>(id)));
  writer.remove(evolved_row(6, 1, std::nullopt));
  commit(writer, "after");
  const LoadedTable table = catalog_->load_table(TableIdentifier{"db", "evolving"});
  EXPECT_EQ(table.metadata.current_schema().find_field("title")->id, 2);
  EXPECT_EQ(table.metadata.last_column_id, 8);
  EXPECT_EQ(table.metadata.properties.at("binberg.note"), "evolved");
  EXPECT_EQ(table.metadata.current_snapshot()->schema_id, table.metadata.current_schema_id);
  std::vector<Row> expected;
  for (std::int64_t id = 1; id <= 20; ++id) {
    if (id == 6) continue;
    expected.push_back(id <= 5 ? evolved_row(id, 2, static_cast<std::int32_t>(id)) : evolved_row(id, 1, std::nullopt));
  }
  const auto want = canonical_rows(evolved, expected);
  EXPECT_EQ(canonical_rows(evolved, read_table_rows(table.metadata)), want) << "binberg reader";
  EXPECT_EQ(tool_rows(fmt::format("rows pyiceberg '{}' '{}' db.evolving", options_.uri, options_.warehouse)), want)
      << "pyiceberg";
  EXPECT_EQ(tool_rows(fmt::format("rows duckdb '{}'", table.metadata_location)), want) << "duckdb";
  TableWriter reopened(catalog_->load_table(TableIdentifier{"db", "evolving"}), WriteMode::kUpsert);
  EXPECT_EQ(reopened.index().size(), 19U);
  // The key's fields and types cannot change; nor can a batch be pending.
  writer.upsert(evolved_row(7, 3, 1));
  EXPECT_THROW(writer.evolve_schema(evolved, {}), Error);
  const Schema rekeyed(0,
                       {NestedField{1, "id", true, long_type(), std::nullopt},
                        NestedField{2, "title", true, string_type(), std::nullopt}},
                       {1, 2});
  EXPECT_THROW(reopened.evolve_schema(rekeyed, {}), Error);
}

TEST_F(TableWriterTest, PartitionedTableAgreesWithPyicebergAndDuckdb) {
  const PartitionSpec spec(0, {PartitionField{4, 1000, "day", Transform::identity()},
                               PartitionField{1, 1001, "id_bucket", Transform::bucket(4)}});
  TableWriter writer(create("partitioned", spec), WriteMode::kUpsert);
  ChangeGenerator changes(99, 200);
  for (int commit_number = 0; commit_number < 3; ++commit_number) {
    changes.apply(writer, 200);
    commit(writer, fmt::format("p{}", commit_number));
  }
  EXPECT_GT(std::stoll(writer.table().metadata.current_snapshot()->summary.at("total-data-files")), 3);
  expect_all_readers_see("partitioned", changes.expected_rows());
}

TEST_F(TableWriterTest, AppendWriterKeepsEveryRow) {
  const LoadedTable table = catalog_->create_table(TableIdentifier{"db", "log"}, Schema(0, keyed_schema().fields()),
                                                   PartitionSpec::unpartitioned(), SortOrder::unsorted(), {});
  TableWriter writer(table, WriteMode::kAppend);
  std::vector<Row> rows;
  for (std::uint64_t version = 1; version <= 20; ++version) {
    rows.push_back(keyed_row(1, version));
    writer.append(rows.back());
  }
  commit(writer, "log1");
  expect_all_readers_see("log", rows);
}

TEST_F(TableWriterTest, MultiTableCommitIsAllOrNothing) {
  TableWriter first(create("a"), WriteMode::kUpsert);
  TableWriter second(create("b"), WriteMode::kUpsert);
  // Another writer moves table b on, so second's base is stale.
  TableWriter intruder(catalog_->load_table(TableIdentifier{"db", "b"}), WriteMode::kUpsert);
  intruder.upsert(keyed_row(9, 1));
  commit(intruder, "intruder");

  first.upsert(keyed_row(1, 1));
  second.upsert(keyed_row(2, 1));
  const std::vector<PreparedCommit> prepared{first.prepare("both", {}, kNow), second.prepare("both", {}, kNow)};
  EXPECT_THROW(commit_tables(*catalog_, {&first, &second}, prepared), CommitConflict);
  EXPECT_EQ(catalog_->load_table(TableIdentifier{"db", "a"}).metadata.current_snapshot(), nullptr);
  EXPECT_THROW(first.upsert(keyed_row(1, 2)), Error) << "a writer whose commit failed must be reopened";

  TableWriter retry_first(catalog_->load_table(TableIdentifier{"db", "a"}), WriteMode::kUpsert);
  TableWriter retry_second(catalog_->load_table(TableIdentifier{"db", "b"}), WriteMode::kUpsert);
  retry_first.upsert(keyed_row(1, 1));
  retry_second.upsert(keyed_row(2, 1));
  const std::vector<PreparedCommit> again{retry_first.prepare("both", {}, kNow),
                                          retry_second.prepare("both", {}, kNow)};
  commit_tables(*catalog_, {&retry_first, &retry_second}, again);
  expect_all_readers_see("a", {keyed_row(1, 1)});
  expect_all_readers_see("b", {keyed_row(2, 1), keyed_row(9, 1)});
}

TEST_F(TableWriterTest, UpsertWriterRefusesATableWithoutIdentifierFields) {
  const LoadedTable table = catalog_->create_table(TableIdentifier{"db", "nokey"}, Schema(0, keyed_schema().fields()),
                                                   PartitionSpec::unpartitioned(), SortOrder::unsorted(), {});
  try {
    TableWriter writer(table, WriteMode::kUpsert);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("identifier fields"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace binberg::iceberg
