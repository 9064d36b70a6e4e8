// Table maintenance on real tables: compaction, manifest merging, snapshot expiry and orphan-file
// removal leave the rows exactly as they were (binberg's reader, pyiceberg and DuckDB agree), and
// stay correct when a writer commits in the middle of them.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/clock.h"
#include "core/failpoint.h"
#include "iceberg/compaction.h"
#include "iceberg/manifest_list.h"
#include "iceberg/metadata_file.h"
#include "iceberg/snapshot_expiry.h"
#include "iceberg/table_scan.h"
#include "table_test_support.h"

namespace binberg::iceberg {
namespace {

using test_tables::canonical_rows;
using test_tables::ChangeGenerator;
using test_tables::keyed_schema;

class MaintenanceTest : public test_tables::TableTest {
 protected:
  void TearDown() override { failpoint::disarm_all(); }

  TableIdentifier id(const std::string& name) const { return TableIdentifier{"db", name}; }
  LoadedTable load(const std::string& name) { return catalog_->load_table(id(name)); }

  // COMMITS commits of COUNT changes each into a new table NAME.
  void fill(const std::string& name, ChangeGenerator& changes, int commits, int count,
            const PartitionSpec& spec = PartitionSpec::unpartitioned()) {
    TableWriter writer(create(name, spec), WriteMode::kUpsert);
    for (int c = 0; c < commits; ++c) {
      changes.apply(writer, count);
      commit(writer, fmt::format("c{}", c));
    }
  }

  static std::size_t manifest_count(const LoadedTable& table) {
    return read_manifest_list(table.metadata.current_snapshot()->manifest_list).size();
  }

  // Every regular file under the table's directory.
  static std::set<std::string> files_on_disk(const LoadedTable& table) {
    std::set<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(local_path(table.metadata.location))) {
      if (entry.is_regular_file()) files.insert(entry.path().lexically_normal().string());
    }
    return files;
  }
};

TEST_F(MaintenanceTest, CompactionMergesFilesDropsResolvedDeletesAndKeepsTheRows) {
  ChangeGenerator changes(5, 300);
  fill("orders", changes, 8, 200);
  const LoadedTable before = load("orders");
  const ScanPlan plan_before = plan_scan(before.metadata);
  ASSERT_GE(plan_before.data_files.size(), 8u);
  ASSERT_GT(plan_before.delete_files.size(), 0u);
  ASSERT_GT(manifest_count(before), 2u);

  const CompactionResult result = compact_table(*catalog_, id("orders"));
  ASSERT_TRUE(result.snapshot_id);
  const LoadedTable after = load("orders");
  const ScanPlan plan_after = plan_scan(after.metadata);
  EXPECT_EQ(plan_after.data_files.size(), 1u);
  EXPECT_EQ(plan_after.delete_files.size(), 0u) << "every delete was applied, so every delete file goes";
  EXPECT_EQ(result.rewritten_data_files, static_cast<std::int64_t>(plan_before.data_files.size()));
  EXPECT_EQ(result.removed_delete_files, static_cast<std::int64_t>(plan_before.delete_files.size()));
  EXPECT_EQ(result.rows_written, static_cast<std::int64_t>(changes.expected().size()));
  EXPECT_GT(result.rows_dropped, 0);
  EXPECT_EQ(manifest_count(after), 2u) << "the data files, and the removed delete files as DELETED entries";

  const Snapshot& snapshot = *after.metadata.current_snapshot();
  EXPECT_EQ(snapshot.operation, SnapshotOperation::kReplace);
  EXPECT_EQ(snapshot.summary.at("binberg.source-position"), "c7") << "the table's position is carried forward";
  EXPECT_EQ(snapshot.summary.at("total-records"), std::to_string(changes.expected().size()));
  EXPECT_EQ(snapshot.summary.at("total-delete-files"), "0");
  expect_all_readers_see("orders", changes.expected_rows());

  // A writer reopened on the compacted table finds every key in the new file.
  TableWriter writer(after, WriteMode::kUpsert);
  EXPECT_EQ(writer.index().size(), changes.expected().size());
  changes.apply(writer, 200);
  commit(writer, "c8");
  EXPECT_EQ(manifest_count(load("orders")), 3u) << "the new data and delete manifests and the compacted one";
  expect_all_readers_see("orders", changes.expected_rows());

  ASSERT_FALSE(plan_scan(load("orders").metadata).delete_files.empty());
  EXPECT_TRUE(compact_table(*catalog_, id("orders")).snapshot_id) << "new deletes make new work";
  EXPECT_TRUE(plan_scan(load("orders").metadata).delete_files.empty());
  expect_all_readers_see("orders", changes.expected_rows());
}

TEST_F(MaintenanceTest, CompactedTableNeedsNothingMore) {
  ChangeGenerator changes(6, 100);
  fill("quiet", changes, 3, 100);
  ASSERT_TRUE(compact_table(*catalog_, id("quiet")).snapshot_id);
  const std::size_t snapshots = load("quiet").metadata.snapshots.size();
  const CompactionResult again = compact_table(*catalog_, id("quiet"));
  EXPECT_FALSE(again.snapshot_id);
  EXPECT_EQ(load("quiet").metadata.snapshots.size(), snapshots) << "nothing to do commits nothing";
}

TEST_F(MaintenanceTest, PartitionedCompactionKeepsEachPartitionApart) {
  const PartitionSpec spec(0, {PartitionField{4, 1000, "day", Transform::identity()},
                               PartitionField{1, 1001, "id_bucket", Transform::bucket(4)}});
  ChangeGenerator changes(8, 400);
  fill("parted", changes, 4, 300, spec);
  const std::size_t partitions_before = [&] {
    std::vector<std::vector<Literal>> seen;
    for (const LiveFile& file : plan_scan(load("parted").metadata).data_files) {
      if (std::find(seen.begin(), seen.end(), file.file.partition) == seen.end()) seen.push_back(file.file.partition);
    }
    return seen.size();
  }();
  const CompactionResult result = compact_table(*catalog_, id("parted"));
  ASSERT_TRUE(result.snapshot_id);
  const ScanPlan plan = plan_scan(load("parted").metadata);
  EXPECT_EQ(plan.data_files.size(), partitions_before) << "one file per partition, never one across partitions";
  EXPECT_TRUE(plan.delete_files.empty());
  const TableWriter reopened(load("parted"), WriteMode::kUpsert);  // rebuilds the index: one row per key
  EXPECT_EQ(reopened.index().size(), changes.expected().size());
  expect_all_readers_see("parted", changes.expected_rows());
}

// A writer commits upserts and deletes while the compaction is between writing its files and
// committing them: the compaction rebases onto the writer's snapshot, moving the writer's
// position deletes of rewritten rows onto the new files. Nothing the writer did is lost.
TEST_F(MaintenanceTest, CompactionRebasesDeletesAWriterCommittedMeanwhile) {
  ChangeGenerator changes(9, 250);
  fill("busy", changes, 5, 200);
  int concurrent_commits = 0;
  failpoint::arm_call(
      "iceberg.compaction.after_data_files",
      [&] {
        TableWriter writer(load("busy"), WriteMode::kUpsert);
        changes.apply(writer, 150);
        commit(writer, "during-compaction");
        ++concurrent_commits;
      },
      failpoint::Trigger{failpoint::Action::kCall, {}, 1, 1});
  const CompactionResult result = compact_table(*catalog_, id("busy"));
  ASSERT_EQ(concurrent_commits, 1);
  ASSERT_TRUE(result.snapshot_id);
  EXPECT_EQ(result.attempts, 2) << "the first swap meets the writer's commit";
  EXPECT_GT(result.rebased_deletes, 0) << "the writer replaced rows the compaction had rewritten";
  const LoadedTable after = load("busy");
  EXPECT_EQ(after.metadata.current_snapshot()->summary.at("binberg.source-position"), "during-compaction");
  expect_all_readers_see("busy", changes.expected_rows());

  TableWriter writer(after, WriteMode::kUpsert);
  EXPECT_EQ(writer.index().size(), changes.expected().size()) << "one live row per key after the rebase";
  changes.apply(writer, 150);
  commit(writer, "after");
  expect_all_readers_see("busy", changes.expected_rows());
  ASSERT_TRUE(compact_table(*catalog_, id("busy")).snapshot_id);
  expect_all_readers_see("busy", changes.expected_rows());
  EXPECT_TRUE(plan_scan(load("busy").metadata).delete_files.empty()) << "the next compaction resolves them all";
}

// Another compaction wins the race: the files this one rewrote are gone, so it plans again on the
// new state, where nothing is left to do. No rows are duplicated by two rewrites of the same files.
TEST_F(MaintenanceTest, CompactionStartsOverWhenAnotherRewroteItsFiles) {
  ChangeGenerator changes(10, 200);
  fill("raced", changes, 4, 150);
  failpoint::arm_call(
      "iceberg.compaction.after_data_files", [&] { ASSERT_TRUE(compact_table(*catalog_, id("raced")).snapshot_id); },
      failpoint::Trigger{failpoint::Action::kCall, {}, 1, 1});
  const CompactionResult result = compact_table(*catalog_, id("raced"));
  EXPECT_FALSE(result.snapshot_id) << "the other compaction left nothing to do";
  EXPECT_EQ(result.attempts, 3);
  EXPECT_EQ(plan_scan(load("raced").metadata).data_files.size(), 1u);
  expect_all_readers_see("raced", changes.expected_rows());
}

TEST_F(MaintenanceTest, RewriteManifestsMergesThemAndChangesNoFile) {
  ChangeGenerator changes(11, 200);
  fill("lists", changes, 6, 100);
  const LoadedTable before = load("lists");
  const ScanPlan plan_before = plan_scan(before.metadata);
  ASSERT_GT(manifest_count(before), 2u);
  const CompactionResult result = rewrite_manifests(*catalog_, id("lists"));
  ASSERT_TRUE(result.snapshot_id);
  const LoadedTable after = load("lists");
  EXPECT_EQ(manifest_count(after), 2u) << "one data and one delete manifest";
  const ScanPlan plan_after = plan_scan(after.metadata);
  EXPECT_EQ(plan_after.data_files.size(), plan_before.data_files.size());
  EXPECT_EQ(plan_after.delete_files.size(), plan_before.delete_files.size());
  EXPECT_EQ(result.rewritten_data_files, 0);
  expect_all_readers_see("lists", changes.expected_rows());
}

TEST_F(MaintenanceTest, ExpiryRemovesOnlyFilesNoRetainedSnapshotNeeds) {
  ChangeGenerator changes(12, 200);
  fill("history", changes, 5, 150);
  ASSERT_TRUE(compact_table(*catalog_, id("history")).snapshot_id);
  const LoadedTable before = load("history");
  const std::set<std::string> files_before = files_on_disk(before);

  ExpireOptions options;
  options.older_than_ms = unix_millis() + 60'000;  // every snapshot is old enough
  options.retain_last = 1;
  options.dry_run = true;
  const ExpireResult planned = expire_snapshots(*catalog_, id("history"), options);
  EXPECT_EQ(planned.expired_snapshots.size(), before.metadata.snapshots.size() - 1);
  EXPECT_FALSE(planned.deleted_files.empty());
  EXPECT_EQ(files_on_disk(before), files_before) << "a dry run deletes nothing";
  EXPECT_EQ(load("history").metadata_location, before.metadata_location) << "and commits nothing";

  options.dry_run = false;
  const ExpireResult result = expire_snapshots(*catalog_, id("history"), options);
  EXPECT_EQ(result.expired_snapshots, planned.expired_snapshots);
  EXPECT_EQ(result.deleted_files, planned.deleted_files);
  const LoadedTable after = load("history");
  ASSERT_EQ(after.metadata.snapshots.size(), 1u);
  EXPECT_EQ(after.metadata.current_snapshot_id, before.metadata.current_snapshot_id);
  for (const std::string& file : result.deleted_files) EXPECT_FALSE(std::filesystem::exists(local_path(file))) << file;
  // What the current snapshot reads is all still there (the readers would fail otherwise).
  for (const LiveFile& file : plan_scan(after.metadata).data_files) {
    EXPECT_TRUE(std::filesystem::exists(local_path(file.file.file_path)));
  }
  expect_all_readers_see("history", changes.expected_rows());
  EXPECT_TRUE(expire_snapshots(*catalog_, id("history"), options).expired_snapshots.empty());
}

TEST_F(MaintenanceTest, ExpiryKeepsTheNewestAncestorsAndYoungSnapshots) {
  ChangeGenerator changes(13, 100);
  fill("kept", changes, 5, 50);
  ExpireOptions options;
  options.older_than_ms = unix_millis() + 60'000;
  options.retain_last = 3;
  EXPECT_EQ(expire_snapshots(*catalog_, id("kept"), options).expired_snapshots.size(), 2u);
  EXPECT_EQ(load("kept").metadata.snapshots.size(), 3u);
  options.older_than_ms = 0;  // none is older than the epoch
  options.retain_last = 1;
  EXPECT_TRUE(expire_snapshots(*catalog_, id("kept"), options).expired_snapshots.empty());
  expect_all_readers_see("kept", changes.expected_rows());
}

// A commit that failed after writing its files leaves orphans; orphan removal finds exactly those,
// and keeps them while they are younger than the grace period (a writer may be about to commit).
TEST_F(MaintenanceTest, OrphanRemovalDeletesWhatAFailedCommitLeftAndNothingElse) {
  ChangeGenerator changes(14, 150);
  fill("crashy", changes, 3, 100);
  const std::set<std::string> committed_files = files_on_disk(load("crashy"));
  // Files take their times from the kernel's coarse clock, which may lag unix_millis() by a tick:
  // a margin of 1 ms let a file written after this count as older under load.
  const std::int64_t before_failure = unix_millis() - 1'000;
  {
    TableWriter writer(load("crashy"), WriteMode::kUpsert);
    ChangeGenerator lost(99, 150);
    lost.apply(writer, 100);
    failpoint::arm("iceberg.writer.after_metadata_file", failpoint::Trigger{});
    EXPECT_THROW(writer.prepare("lost", {}, kNow), failpoint::FailpointError);
    failpoint::disarm_all();
  }
  std::set<std::string> leftovers;
  for (const std::string& file : files_on_disk(load("crashy"))) {
    if (!committed_files.contains(file)) leftovers.insert(file);
  }
  ASSERT_GE(leftovers.size(), 3u) << "data file, manifest, manifest list, metadata file";

  OrphanOptions options;
  options.older_than_ms = before_failure;
  EXPECT_TRUE(remove_orphan_files(*catalog_, id("crashy"), options).orphan_files.empty())
      << "files younger than the grace period stay";

  options.older_than_ms = unix_millis() + 60'000;
  options.dry_run = true;
  const OrphanResult planned = remove_orphan_files(*catalog_, id("crashy"), options);
  EXPECT_EQ(std::set<std::string>(planned.orphan_files.begin(), planned.orphan_files.end()), leftovers);
  options.dry_run = false;
  const OrphanResult result = remove_orphan_files(*catalog_, id("crashy"), options);
  EXPECT_EQ(result.orphan_files, planned.orphan_files);
  EXPECT_EQ(files_on_disk(load("crashy")), committed_files);
  expect_all_readers_see("crashy", changes.expected_rows());
}

}  // namespace
}  // namespace binberg::iceberg
