// Crash safety and concurrency of table commits, with real processes:
//   - a writer SIGKILLed at every named failpoint of a commit leaves the table at the old snapshot
//     (or at the new one once the catalog committed), readable by binberg, pyiceberg and DuckDB,
//     and a restarted writer commits the same batch;
//   - maintenance SIGKILLed at each of its steps changes no row, and a rerun completes it;
//   - two processes committing to one table through one catalog lose no commit.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "core/clock.h"
#include "iceberg/snapshot_expiry.h"
#include "iceberg/table_scan.h"
#include "iceberg/table_writer.h"
#include "support/temp_dir.h"
#include "support/test_services.h"
#include "table_test_support.h"

namespace binberg::iceberg {
namespace {

using test_tables::canonical_rows;
using test_tables::ChangeGenerator;
using test_tables::keyed_schema;

constexpr std::uint64_t kSeed = 2024;
constexpr std::int64_t kKeySpace = 400;
constexpr int kChanges = 300;

struct ToolRun {
  bool killed = false;  // by SIGKILL (a `crash` failpoint)
  int exit_code = -1;
};

ToolRun run_tool(const std::string& arguments, const std::string& failpoints = "") {
  const std::string command =
      fmt::format("BINBERG_FAILPOINTS='{}' '{}' {} >/dev/null", failpoints, BINBERG_TABLE_TOOL, arguments);
  const int status = std::system(command.c_str());
  ToolRun run;
  if (WIFSIGNALED(status)) {
    run.killed = WTERMSIG(status) == SIGKILL;
  } else if (WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
    run.killed = run.exit_code == 128 + SIGKILL;  // the shell reports its child's signal this way
  }
  return run;
}

class TableProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_ = test_tables::sqlite_catalog_options(dir_.path().string());
    catalog_ = open_catalog(options_);
    catalog_->create_namespace("db");
  }

  std::string tool_arguments(const std::string& table, int skip, int batches) const {
    return fmt::format(
        "--uri '{}' --warehouse '{}' --table {} --seed {} --key-space {} --changes {} "
        "--skip-batches {} --batches {}",
        options_.uri, options_.warehouse, table, kSeed, kKeySpace, kChanges, skip, batches);
  }

  void expect_all_readers_see(const std::string& table, const ChangeGenerator& state) {
    const LoadedTable loaded = catalog_->load_table(TableIdentifier{"db", table});
    const auto want = canonical_rows(keyed_schema(), state.expected_rows());
    EXPECT_EQ(canonical_rows(keyed_schema(), read_table_rows(loaded.metadata)), want) << "binberg reader";
    EXPECT_EQ(
        test_tables::tool_rows(fmt::format("rows pyiceberg '{}' '{}' db.{}", options_.uri, options_.warehouse, table)),
        want)
        << "pyiceberg";
    EXPECT_EQ(test_tables::tool_rows(fmt::format("rows duckdb '{}'", loaded.metadata_location)), want) << "duckdb";
  }

  binberg::testing::TempDir dir_;
  CatalogOptions options_;
  std::unique_ptr<Catalog> catalog_;
};

class TableCrashTest : public TableProcessTest, public ::testing::WithParamInterface<std::string> {};

// Failpoint -> whether the crash leaves the new snapshot visible.
const std::map<std::string, bool> kCommitFailpoints = {
    {"iceberg.parquet.before_close", false},       {"iceberg.writer.after_data_files", false},
    {"iceberg.writer.after_delete_files", false},  {"iceberg.writer.after_manifests", false},
    {"iceberg.writer.after_metadata_file", false}, {"iceberg.catalog.before_commit", false},
    {"iceberg.catalog.after_commit", true},
};

TEST_P(TableCrashTest, CrashLeavesOldOrNewSnapshotAndRestartCommits) {
  const std::string& failpoint = GetParam();
  catalog_->create_table(TableIdentifier{"db", "t"}, keyed_schema(), PartitionSpec::unpartitioned(),
                         SortOrder::unsorted(), {});
  // Two committed batches, so the crashing commit has rows to delete.
  ASSERT_EQ(run_tool(tool_arguments("t", 0, 2)).exit_code, 0);
  ChangeGenerator old_state(kSeed, kKeySpace);
  old_state.apply(nullptr, kChanges);
  old_state.apply(nullptr, kChanges);
  ChangeGenerator new_state = old_state;
  new_state.apply(nullptr, kChanges);
  const std::string before = catalog_->metadata_location(TableIdentifier{"db", "t"});

  const ToolRun crashed = run_tool(tool_arguments("t", 2, 3), failpoint + "=crash");
  ASSERT_TRUE(crashed.killed) << failpoint << " was not hit (exit code " << crashed.exit_code << ")";
  const bool committed = kCommitFailpoints.at(failpoint);
  EXPECT_EQ(catalog_->metadata_location(TableIdentifier{"db", "t"}) != before, committed);
  expect_all_readers_see("t", committed ? new_state : old_state);

  if (!committed) {
    ASSERT_EQ(run_tool(tool_arguments("t", 2, 3)).exit_code, 0) << "restart after the crash";
    expect_all_readers_see("t", new_state);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCommitFailpoint, TableCrashTest, ::testing::ValuesIn([] {
                           std::vector<std::string> names;
                           for (const auto& [name, visible] : kCommitFailpoints) names.push_back(name);
                           return names;
                         }()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

// Maintenance SIGKILLed at each of its steps: the rows never change (old or new snapshot, both
// hold them), a rerun completes it, and orphan removal then clears what the crash left behind.
struct MaintenanceCrash {
  std::string operation;  // table_tool --maintenance
  std::string failpoint;
};

class MaintenanceCrashTest : public TableProcessTest, public ::testing::WithParamInterface<MaintenanceCrash> {};

TEST_P(MaintenanceCrashTest, CrashChangesNoRowAndARerunCompletes) {
  const auto& [operation, failpoint] = GetParam();
  catalog_->create_table(TableIdentifier{"db", "t"}, keyed_schema(), PartitionSpec::unpartitioned(),
                         SortOrder::unsorted(), {});
  ASSERT_EQ(run_tool(tool_arguments("t", 0, 4)).exit_code, 0);
  ChangeGenerator state(kSeed, kKeySpace);
  for (int batch = 0; batch < 4; ++batch) state.apply(nullptr, kChanges);
  const std::string maintenance = " --maintenance " + operation;

  const ToolRun crashed = run_tool(tool_arguments("t", 4, 4) + maintenance, failpoint + "=crash");
  ASSERT_TRUE(crashed.killed) << failpoint << " was not hit (exit code " << crashed.exit_code << ")";
  expect_all_readers_see("t", state);
  ASSERT_EQ(run_tool(tool_arguments("t", 4, 4) + maintenance).exit_code, 0) << "rerun after the crash";
  expect_all_readers_see("t", state);
  const LoadedTable table = catalog_->load_table(TableIdentifier{"db", "t"});
  if (operation == "compact") {
    EXPECT_TRUE(plan_scan(table.metadata).delete_files.empty());
  } else {
    EXPECT_EQ(table.metadata.snapshots.size(), 1u);
  }
  OrphanOptions orphans;
  orphans.older_than_ms = unix_millis() + 60'000;
  remove_orphan_files(*catalog_, TableIdentifier{"db", "t"}, orphans);
  expect_all_readers_see("t", state);
  orphans.dry_run = true;
  EXPECT_TRUE(remove_orphan_files(*catalog_, TableIdentifier{"db", "t"}, orphans).orphan_files.empty());
}

INSTANTIATE_TEST_SUITE_P(EveryMaintenanceFailpoint, MaintenanceCrashTest,
                         ::testing::Values(MaintenanceCrash{"compact", "iceberg.parquet.before_close"},
                                           MaintenanceCrash{"compact", "iceberg.compaction.after_data_files"},
                                           MaintenanceCrash{"compact", "iceberg.compaction.after_manifests"},
                                           MaintenanceCrash{"compact", "iceberg.catalog.before_commit"},
                                           MaintenanceCrash{"compact", "iceberg.catalog.after_commit"},
                                           MaintenanceCrash{"expire", "iceberg.catalog.before_commit"},
                                           MaintenanceCrash{"expire", "iceberg.catalog.after_commit"},
                                           MaintenanceCrash{"expire", "iceberg.expire.before_delete_files"}),
                         [](const ::testing::TestParamInfo<MaintenanceCrash>& param) {
                           std::string name = param.param.operation + "_" + param.param.failpoint;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

// Two processes, disjoint keys, one table: every batch of both lands exactly once.
void expect_concurrent_writers_lose_nothing(const CatalogOptions& options, Catalog& catalog, const std::string& table) {
  constexpr int kBatches = 8;
  catalog.create_table(TableIdentifier{"db", table}, keyed_schema(), PartitionSpec::unpartitioned(),
                       SortOrder::unsorted(), {});
  const auto writer = [&](int seed, std::int64_t first_key) {
    return fmt::format(
        "'{}' --uri '{}' --warehouse '{}' --table {} --seed {} --key-space 200 --first-key {} "
        "--changes 150 --batches {} --writer-id w{}",
        BINBERG_TABLE_TOOL, options.uri, options.warehouse, table, seed, first_key, kBatches, seed);
  };
  const std::string output = binberg::testing::run_command(
      fmt::format("({} > '{}/w1.json') & ({} > '{}/w2.json'); wait; cat '{}/w1.json' '{}/w2.json'", writer(1, 1),
                  options.warehouse, writer(2, 100001), options.warehouse, options.warehouse, options.warehouse));
  // Each line {"commits": N, "conflicts": M}.
  int commits = 0;
  std::size_t at = 0;
  while ((at = output.find("\"commits\": ", at)) != std::string::npos) {
    at += 11;
    commits += std::stoi(output.substr(at));
  }
  EXPECT_EQ(commits, 2 * kBatches) << output;

  ChangeGenerator first(1, 200, 1);
  ChangeGenerator second(2, 200, 100001);
  for (int batch = 0; batch < kBatches; ++batch) {
    first.apply(nullptr, 150);
    second.apply(nullptr, 150);
  }
  std::vector<Row> expected = first.expected_rows();
  for (Row& row : second.expected_rows()) expected.push_back(std::move(row));
  const LoadedTable loaded = catalog.load_table(TableIdentifier{"db", table});
  EXPECT_EQ(loaded.metadata.snapshots.size(), static_cast<std::size_t>(2 * kBatches));
  EXPECT_EQ(canonical_rows(keyed_schema(), read_table_rows(loaded.metadata)), canonical_rows(keyed_schema(), expected));
  // Every writer's batches are in the history, each once.
  std::map<std::string, int> commit_ids;
  for (const Snapshot& snapshot : loaded.metadata.snapshots) ++commit_ids[snapshot.summary.at(kCommitIdProperty)];
  EXPECT_EQ(commit_ids.size(), static_cast<std::size_t>(2 * kBatches));
}

TEST_F(TableProcessTest, TwoProcessesOnOneSqliteCatalogLoseNoCommit) {
  expect_concurrent_writers_lose_nothing(options_, *catalog_, "shared");
}

}  // namespace
}  // namespace binberg::iceberg
