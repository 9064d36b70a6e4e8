// The rows spool keeps events in order whether they stay in memory or go to its spill file, and
// names the directory when it cannot spill.

#include "mysql/rows_spool.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "support/temp_dir.h"

namespace binberg::mysql {
namespace {

EncodedRows rows_event(const std::shared_ptr<const TableMap>& table, int n) {
  EncodedRows rows;
  rows.table = table;
  rows.rows.kind = static_cast<RowsKind>(n % 3);
  rows.rows.table_id = table->table_id;
  rows.rows.column_count = static_cast<std::uint32_t>(n);
  rows.rows.columns_before = std::string(1, static_cast<char>(n));
  rows.rows.columns_after = n % 2 ? "" : "\xff";
  rows.rows.rows = std::string(static_cast<std::size_t>(n * 37), static_cast<char>('a' + n % 26));
  rows.server_id = 7;
  rows.end = BinlogPosition{"binlog.000003", static_cast<std::uint64_t>(1000 + n)};
  return rows;
}

void expect_read_back(RowsSpool& spool, const std::vector<std::shared_ptr<const TableMap>>& tables, int count) {
  for (int n = 0; n < count; ++n) {
    std::optional<EncodedRows> rows = spool.next();
    ASSERT_TRUE(rows) << n;
    const EncodedRows want = rows_event(tables[static_cast<std::size_t>(n % 2)], n);
    EXPECT_EQ(rows->table, want.table) << n;
    EXPECT_EQ(rows->rows.kind, want.rows.kind) << n;
    EXPECT_EQ(rows->rows.table_id, want.rows.table_id) << n;
    EXPECT_EQ(rows->rows.column_count, want.rows.column_count) << n;
    EXPECT_EQ(rows->rows.columns_before, want.rows.columns_before) << n;
    EXPECT_EQ(rows->rows.columns_after, want.rows.columns_after) << n;
    EXPECT_EQ(rows->rows.rows, want.rows.rows) << n;
    EXPECT_EQ(rows->end, want.end) << n;
  }
  EXPECT_FALSE(spool.next());
}

class RowsSpoolTest : public ::testing::Test {
 protected:
  std::vector<std::shared_ptr<const TableMap>> tables_ = {std::make_shared<const TableMap>(TableMap{11, {}, {}}),
                                                          std::make_shared<const TableMap>(TableMap{12, {}, {}})};
  binberg::testing::TempDir dir_;
};

TEST_F(RowsSpoolTest, SmallTransactionStaysInMemory) {
  RowsSpool spool(SpoolOptions{dir_.path().string(), 1 << 20});
  for (int n = 0; n < 50; ++n) spool.add(rows_event(tables_[n % 2], n));
  EXPECT_FALSE(spool.spilled());
  EXPECT_EQ(spool.events(), 50u);
  expect_read_back(spool, tables_, 50);
}

TEST_F(RowsSpoolTest, LargeTransactionSpillsAndReadsBackInOrder) {
  RowsSpool spool(SpoolOptions{dir_.path().string(), 2000});
  for (int n = 0; n < 300; ++n) spool.add(rows_event(tables_[n % 2], n));
  EXPECT_TRUE(spool.spilled());
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path())) << "the spill file is unlinked";
  expect_read_back(spool, tables_, 300);
  EXPECT_THROW(spool.add(rows_event(tables_[0], 1)), Error) << "a spool is written, then read";
}

TEST_F(RowsSpoolTest, UnusableDirectoryIsNamedInTheError) {
  RowsSpool spool(SpoolOptions{dir_.path().string() + "/missing", 100});
  try {
    for (int n = 0; n < 10; ++n) spool.add(rows_event(tables_[0], n));
    FAIL() << "spilling into a missing directory succeeded";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(dir_.path().string() + "/missing"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace binberg::mysql
