// The checks over every snapshot a table committed (verify/snapshot_history.h), which every drill
// runs as ledger_sum_path_* and whole_transactions_path_*: each passes on a history that keeps its
// invariant and fails, naming the snapshot, on one that breaks it.

#include "verify/snapshot_history.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../iceberg/table_test_support.h"

namespace binberg::verify {
namespace {

using iceberg::NestedField;
using iceberg::Row;
using iceberg::Schema;
using iceberg::TableIdentifier;
using iceberg::TableWriter;
using iceberg::WriteMode;

constexpr std::int64_t kLedgerTotal = 300;

Schema ledger_schema() {
  return Schema(0,
                {NestedField{1, "id", true, iceberg::long_type(), std::nullopt},
                 NestedField{2, "balance", true, iceberg::long_type(), std::nullopt}},
                {1});
}

Schema changelog_schema() {
  return Schema(0, {NestedField{1, "id", true, iceberg::long_type(), std::nullopt},
                    NestedField{2, "_op", true, iceberg::string_type(), std::nullopt},
                    NestedField{3, "_gtid", false, iceberg::string_type(), std::nullopt}});
}

// One changelog row: event ID of transaction GTID (op "r" is an initial-copy row).
Row change(std::int64_t id, const std::string& op, const std::string& gtid) { return Row{id, op, gtid}; }

class SnapshotHistoryTest : public iceberg::test_tables::TableTest {
 protected:
  TableWriter writer(const std::string& name, const Schema& schema, WriteMode mode) {
    const TableIdentifier id{"db", name};
    if (created_.insert(name).second) {
      catalog_->create_table(id, schema, iceberg::PartitionSpec::unpartitioned(), iceberg::SortOrder::unsorted(), {});
    }
    return TableWriter(catalog_->load_table(id), mode);
  }

  // Commits one snapshot of the ledger holding BALANCES (account id -> balance) as upserts.
  void commit_ledger(const std::vector<std::pair<std::int64_t, std::int64_t>>& balances, const std::string& commit) {
    TableWriter ledger = writer("ledger", ledger_schema(), WriteMode::kUpsert);
    for (const auto& [id, balance] : balances) ledger.upsert(Row{id, balance});
    this->commit(ledger, commit);
  }

  // Commits ROWS to changelog NAME in one snapshot with commit id COMMIT.
  void commit_changes(const std::string& name, const std::vector<Row>& rows, const std::string& commit) {
    TableWriter changelog = writer(name, changelog_schema(), WriteMode::kAppend);
    for (const Row& row : rows) changelog.append(row);
    this->commit(changelog, commit);
  }

  HistoryFinding ledger_sums() {
    return check_every_snapshot_sums_to(*catalog_, TableIdentifier{"db", "ledger"}, "balance", kLedgerTotal);
  }

  HistoryFinding whole(const std::vector<std::string>& names) {
    std::vector<TableIdentifier> ids;
    for (const std::string& name : names) ids.push_back(TableIdentifier{"db", name});
    return check_whole_transactions(*catalog_, ids);
  }

  std::set<std::string> created_;
};

TEST_F(SnapshotHistoryTest, ALedgerWhoseEverySnapshotKeepsItsTotalPasses) {
  commit_ledger({{1, 100}, {2, 100}, {3, 100}}, "c1");
  commit_ledger({{1, 70}, {2, 130}}, "c2");  // a whole transfer of 30
  const HistoryFinding finding = ledger_sums();
  EXPECT_EQ(finding.snapshots_checked, 2u);
  EXPECT_EQ(finding.violation_count, 0u) << ::testing::PrintToString(finding.violations);
}

TEST_F(SnapshotHistoryTest, ASnapshotHoldingHalfATransferIsAViolationNamingIt) {
  commit_ledger({{1, 100}, {2, 100}, {3, 100}}, "c1");
  commit_ledger({{1, 70}}, "c2");  // the debit without its credit: what a split transaction shows
  commit_ledger({{2, 130}}, "c3");
  const HistoryFinding finding = ledger_sums();
  EXPECT_EQ(finding.snapshots_checked, 3u);
  ASSERT_EQ(finding.violation_count, 1u);
  EXPECT_NE(finding.violations[0].find("commit c2"), std::string::npos) << finding.violations[0];
  EXPECT_NE(finding.violations[0].find("= 270, not 300"), std::string::npos) << finding.violations[0];
}

TEST_F(SnapshotHistoryTest, ALostChangeBreaksTheSumOfEverySnapshotAfterIt) {
  commit_ledger({{1, 100}, {2, 100}, {3, 100}}, "c1");
  commit_ledger({{2, 130}}, "c2");  // the debit of account 1 was lost
  commit_ledger({{3, 100}}, "c3");
  EXPECT_EQ(ledger_sums().violation_count, 2u);
}

TEST_F(SnapshotHistoryTest, WholeTransactionsAcrossTablesInOneCommitPass) {
  commit_changes("orders", {change(1, "r", "0-1-5"), change(2, "r", "0-1-5")}, "c1");
  commit_changes("orders", {change(1, "u", "0-1-6"), change(3, "c", "0-1-6")}, "c2");
  commit_changes("items", {change(7, "c", "0-1-6")}, "c2");
  const HistoryFinding finding = whole({"orders", "items"});
  EXPECT_EQ(finding.violation_count, 0u) << ::testing::PrintToString(finding.violations);
  EXPECT_EQ(finding.transactions_checked, 2u);
}

TEST_F(SnapshotHistoryTest, ATransactionCutAcrossTwoSnapshotsIsAViolation) {
  commit_changes("orders", {change(1, "c", "0-1-6")}, "c1");
  commit_changes("orders", {change(2, "c", "0-1-6"), change(3, "c", "0-1-7")}, "c2");
  const HistoryFinding finding = whole({"orders"});
  EXPECT_GE(finding.violation_count, 2u);  // each snapshot holds part of it, and it arrives twice
  EXPECT_NE(::testing::PrintToString(finding.violations).find("holds 1 of the 2 events of 0-1-6"), std::string::npos)
      << ::testing::PrintToString(finding.violations);
}

TEST_F(SnapshotHistoryTest, ATransactionAppliedTwiceIsAViolation) {
  commit_changes("orders", {change(1, "c", "0-1-6")}, "c1");
  commit_changes("orders", {change(1, "c", "0-1-6")}, "c2");  // a redelivery applied again
  const HistoryFinding finding = whole({"orders"});
  EXPECT_GE(finding.violation_count, 1u);
  EXPECT_NE(::testing::PrintToString(finding.violations).find("arrived in two snapshots"), std::string::npos)
      << ::testing::PrintToString(finding.violations);
}

TEST_F(SnapshotHistoryTest, ATransactionVisibleInDifferentCommitsPerTableIsAViolation) {
  commit_changes("orders", {change(1, "c", "0-1-6")}, "c1");
  commit_changes("items", {change(7, "c", "0-1-6")}, "c2");  // one transaction, two commits
  const HistoryFinding finding = whole({"orders", "items"});
  ASSERT_EQ(finding.violation_count, 1u);
  EXPECT_NE(finding.violations[0].find("different commits per table (c1 and c2)"), std::string::npos)
      << finding.violations[0];
}

}  // namespace
}  // namespace binberg::verify
