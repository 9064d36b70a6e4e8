// `binberg table expire` and `binberg table remove-orphans` as an operator runs them: what they
// print (text and JSON), that a dry run changes nothing, and their default ages.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "iceberg/metadata_file.h"
#include "iceberg/table_scan.h"
#include "iceberg/table_test_support.h"
#include "support/test_services.h"  // run_command

namespace binberg::cli {
namespace {

using iceberg::LoadedTable;
using iceberg::TableIdentifier;
using iceberg::test_tables::ChangeGenerator;
using nlohmann::json;

class TableCommandTest : public iceberg::test_tables::TableTest {
 protected:
  // Three commits into db.t, just now (snapshots are stamped no earlier than the table's creation).
  void SetUp() override {
    TableTest::SetUp();
    iceberg::TableWriter writer(create("t"), iceberg::WriteMode::kUpsert);
    ChangeGenerator changes(21, 50);
    for (int c = 0; c < 3; ++c) {
      changes.apply(writer, 40);
      commit(writer, fmt::format("c{}", c));
    }
  }

  LoadedTable load() { return catalog_->load_table(TableIdentifier{"db", "t"}); }

  // Runs `binberg table ARGUMENTS db.t` on the test catalog; its standard output.
  std::string binberg_table(const std::string& arguments) {
    return binberg::testing::run_command(fmt::format("'{}' table {} --catalog '{}' --warehouse '{}' db.t", BINBERG_CLI,
                                                     arguments, options_.uri, options_.warehouse));
  }

  // A file nothing in the table refers to, written AGE ago.
  std::string orphan(const std::string& name, std::chrono::hours age) {
    const std::filesystem::path path =
        (iceberg::local_path(load().metadata.location) / "data" / name).lexically_normal();
    std::ofstream(path) << "left by a failed commit";
    std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now() - age);
    return path.string();
  }

  std::size_t files_in_table() {
    std::size_t files = 0;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(iceberg::local_path(load().metadata.location))) {
      if (entry.is_regular_file()) ++files;
    }
    return files;
  }
};

TEST_F(TableCommandTest, ExpireReportsWhatADryRunWouldRemoveThenRemovesIt) {
  const LoadedTable before = load();
  const json planned = json::parse(binberg_table("expire --older-than 0s --dry-run --json"));
  ASSERT_EQ(planned.at("expired-snapshots").size(), 2u) << planned.dump();
  const std::size_t files = planned.at("deleted-files").size();
  EXPECT_GT(files, 0u);
  EXPECT_EQ(planned.at("dry-run"), true);
  EXPECT_EQ(planned.at("deleted-bytes"), 0);
  EXPECT_EQ(planned.size(), 4u) << planned.dump();
  EXPECT_EQ(load().metadata_location, before.metadata_location) << "a dry run commits nothing";

  EXPECT_EQ(binberg_table("expire --older-than 0s --dry-run"),
            fmt::format("db.t: 2 snapshots would be expired, {} files would be deleted\n", files));
  EXPECT_EQ(binberg_table("expire --older-than 0s"),
            fmt::format("db.t: 2 snapshots expired, {} files deleted\n", files));
  EXPECT_EQ(load().metadata.snapshots.size(), 1u);
  const json again = json::parse(binberg_table("expire --older-than 0s --json"));
  EXPECT_EQ(again, (json{{"dry-run", false},
                         {"expired-snapshots", json::array()},
                         {"deleted-files", json::array()},
                         {"deleted-bytes", 0}}));
}

TEST_F(TableCommandTest, ExpireKeepsSnapshotsYoungerThanAWeekByDefault) {
  EXPECT_EQ(binberg_table("expire"), "db.t: 0 snapshots expired, 0 files deleted\n");
  EXPECT_EQ(binberg_table("expire --older-than 1h"), "db.t: 0 snapshots expired, 0 files deleted\n");
  EXPECT_EQ(load().metadata.snapshots.size(), 3u);
}

TEST_F(TableCommandTest, ExpireRetainsTheNewestAncestorsItIsAskedTo) {
  const std::size_t files =
      json::parse(binberg_table("expire --older-than 0s --retain-last 2 --dry-run --json")).at("deleted-files").size();
  EXPECT_EQ(binberg_table("expire --older-than 0s --retain-last 2"),
            fmt::format("db.t: 1 snapshots expired, {} files deleted\n", files));
  EXPECT_EQ(load().metadata.snapshots.size(), 2u);
}

TEST_F(TableCommandTest, RemoveOrphansListsThemOnADryRunThenDeletesThem) {
  const std::string old_orphan = orphan("old.parquet", std::chrono::hours(24 * 4));
  orphan("young.parquet", std::chrono::hours(1));  // within the default grace period of 3 days
  const std::size_t files = files_in_table();

  const json planned = json::parse(binberg_table("remove-orphans --dry-run --json"));
  EXPECT_EQ(planned, (json{{"dry-run", true},
                           {"files-checked", files},
                           {"orphan-files", json::array({old_orphan})},
                           {"orphan-bytes", 23}}));
  EXPECT_EQ(
      binberg_table("remove-orphans --dry-run"),
      fmt::format("{}\ndb.t: 1 of {} files are orphans (23 bytes), nothing deleted (dry run)\n", old_orphan, files));
  EXPECT_TRUE(std::filesystem::exists(old_orphan));

  EXPECT_EQ(binberg_table("remove-orphans"),
            fmt::format("{}\ndb.t: 1 of {} files are orphans (23 bytes), deleted\n", old_orphan, files));
  EXPECT_FALSE(std::filesystem::exists(old_orphan));
  EXPECT_EQ(binberg_table("remove-orphans --older-than 30m"),
            fmt::format("{}/young.parquet\ndb.t: 1 of {} files are orphans (23 bytes), deleted\n",
                        std::filesystem::path(old_orphan).parent_path().string(), files - 1));
  EXPECT_EQ(
      binberg_table("remove-orphans --json"),
      json({{"dry-run", false}, {"files-checked", files - 2}, {"orphan-files", json::array()}, {"orphan-bytes", 0}})
              .dump(2) +
          "\n");
}

}  // namespace
}  // namespace binberg::cli
