#include "iceberg/compaction.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <unordered_map>

#include "core/clock.h"
#include "core/error.h"
#include "core/failpoint.h"
#include "iceberg/detail/table_files.h"
#include "iceberg/detail/uuid.h"
#include "iceberg/manifest_list.h"
#include "iceberg/table_scan.h"
#include "iceberg/table_writer.h"

namespace binberg::iceberg {
namespace {

// Raised within an attempt when the rewrite has to be planned again on the table's new state.
struct StartOver {
  std::string reason;
};

// Where a rewritten row went: (index of the new file << 32) | position, or dropped (it was deleted).
constexpr std::uint64_t kDroppedRow = ~std::uint64_t{0};

// The rewrite planned on, and written from, one snapshot; committed on that snapshot or rebased.
struct Rewrite {
  std::int64_t read_snapshot_id = 0;
  std::int64_t read_sequence_number = 0;
  std::set<std::string> rewritten;         // data files replaced
  std::set<std::string> resolved_deletes;  // delete files nothing needs any more
  std::set<std::string> deletes_read;      // delete files live in the snapshot read (all applied)
  std::vector<SnapshotEntry> added;        // the new data files
  std::unordered_map<std::string, std::vector<std::uint64_t>> moved;  // by rewritten file
  std::int64_t rows_read_from_files = 0;                              // record counts of rewritten files
};

bool is_data(const SnapshotEntry& entry) { return entry.entry.data_file.content == FileContent::kData; }

// "spec-id/partition-key": equal for files of one partition of one spec.
std::string group_key(const TableMetadata& metadata, const SnapshotEntry& entry) {
  const PartitionSpec* spec = metadata.find_partition_spec(entry.spec_id);
  if (spec == nullptr) {
    fail("table {}: file {} has unknown partition spec {}", metadata.location, entry.entry.data_file.file_path,
         entry.spec_id);
  }
  return std::to_string(entry.spec_id) + "/" +
         partition_key(partition_types(*spec, metadata.current_schema()), entry.entry.data_file.partition);
}

std::int64_t data_sequence(const SnapshotEntry& entry) { return *entry.entry.sequence_number; }

bool manifests_need_merging(const Snapshot& snapshot) {
  std::set<std::pair<std::int32_t, ManifestContent>> seen;
  for (const ManifestFile& manifest : read_manifest_list(snapshot.manifest_list)) {
    if (!seen.insert({manifest.partition_spec_id, manifest.content}).second) return true;
  }
  return false;
}

// compact_table rewrites data files (and merges the manifests); rewrite_manifests only merges them.
enum class RewriteScope { kDataFiles, kManifestsOnly };

// The paths of the delete files among ENTRIES.
std::set<std::string> delete_file_paths(const std::vector<SnapshotEntry>& entries) {
  std::set<std::string> paths;
  for (const SnapshotEntry& entry : entries) {
    if (!is_data(entry)) paths.insert(entry.entry.data_file.file_path);
  }
  return paths;
}

// Which data files the delete files of a snapshot's ENTRIES apply to; reads every position delete file.
class DeleteTargets {
 public:
  DeleteTargets(const TableMetadata& metadata, const std::vector<SnapshotEntry>& entries)
      : metadata_(metadata), entries_(entries) {
    for (const SnapshotEntry& entry : entries) {
      const std::string& path = entry.entry.data_file.file_path;
      group_of_[path] = group_key(metadata, entry);
      if (is_data(entry)) {
        live_data_.insert(path);
      } else if (entry.entry.data_file.content == FileContent::kPositionDeletes) {
        auto& named = named_by_position_deletes_[path];
        for (const PositionDelete& row : read_position_deletes(entry.entry.data_file)) named.insert(row.file_path);
      }
    }
  }

  const std::string& group_of(const SnapshotEntry& entry) const {
    return group_of_.at(entry.entry.data_file.file_path);
  }

  // Whether any delete file applies to DATA.
  bool any_applies(const SnapshotEntry& data) const {
    for (const SnapshotEntry& deletes : entries_) {
      if (is_data(deletes)) continue;
      if (deletes.entry.data_file.content == FileContent::kPositionDeletes) {
        if (data_sequence(deletes) >= data_sequence(data) && names(deletes, data.entry.data_file.file_path)) {
          return true;
        }
      } else if (equality_applies(deletes, data)) {
        return true;
      }
    }
    return false;
  }

  // Whether DELETES still applies to a live data file outside REWRITTEN.
  bool needed_beside(const SnapshotEntry& deletes, const std::set<std::string>& rewritten) const {
    if (deletes.entry.data_file.content == FileContent::kPositionDeletes) {
      for (const std::string& target : named_by_position_deletes_.at(deletes.entry.data_file.file_path)) {
        if (live_data_.contains(target) && !rewritten.contains(target)) return true;
      }
      return false;
    }
    for (const SnapshotEntry& data : entries_) {
      if (is_data(data) && equality_applies(deletes, data) && !rewritten.contains(data.entry.data_file.file_path)) {
        return true;
      }
    }
    return false;
  }

 private:
  bool names(const SnapshotEntry& position_deletes, const std::string& data_path) const {
    return named_by_position_deletes_.at(position_deletes.entry.data_file.file_path).contains(data_path);
  }

  // An equality delete applies to older data of its partition, or of every partition when its
  // spec is unpartitioned.
  bool equality_applies(const SnapshotEntry& deletes, const SnapshotEntry& data) const {
    if (data_sequence(deletes) <= data_sequence(data)) return false;
    const PartitionSpec* spec = metadata_.find_partition_spec(deletes.spec_id);
    return spec->fields().empty() || group_of(deletes) == group_of(data);
  }

  const TableMetadata& metadata_;
  const std::vector<SnapshotEntry>& entries_;
  std::set<std::string> live_data_;
  std::map<std::string, std::string> group_of_;                             // file -> group_key
  std::map<std::string, std::set<std::string>> named_by_position_deletes_;  // delete file -> data files
};

// Chooses, group by group, the data files to rewrite: a group's small files and those deletes
// apply to, when any delete applies or it has min_input_files small ones (and two files at least).
void choose_data_files(const std::vector<SnapshotEntry>& entries, const DeleteTargets& targets,
                       const CompactionOptions& options, Rewrite& rewrite) {
  std::map<std::string, std::vector<const SnapshotEntry*>> groups;
  for (const SnapshotEntry& entry : entries) {
    if (is_data(entry)) groups[targets.group_of(entry)].push_back(&entry);
  }
  const std::int64_t small = options.target_file_size_bytes / 4 * 3;
  for (const auto& [key, files] : groups) {
    std::vector<const SnapshotEntry*> chosen;
    std::size_t small_files = 0;
    bool any_touched = false;
    for (const SnapshotEntry* file : files) {
      const bool is_small = file->entry.data_file.file_size_in_bytes < small;
      const bool is_touched = targets.any_applies(*file);
      small_files += is_small ? 1 : 0;
      any_touched = any_touched || is_touched;
      if (is_small || is_touched) chosen.push_back(file);
    }
    if (!any_touched && (small_files < options.min_input_files || chosen.size() < 2)) continue;
    for (const SnapshotEntry* file : chosen) {
      rewrite.rewritten.insert(file->entry.data_file.file_path);
      rewrite.rows_read_from_files += file->entry.data_file.record_count;
    }
  }
}

// Chooses the files to rewrite and the delete files that become unnecessary.
Rewrite plan_rewrite(const TableMetadata& metadata, const Snapshot& snapshot, const std::vector<SnapshotEntry>& entries,
                     const CompactionOptions& options, RewriteScope scope) {
  Rewrite rewrite;
  rewrite.read_snapshot_id = snapshot.snapshot_id;
  rewrite.read_sequence_number = snapshot.sequence_number;
  rewrite.deletes_read = delete_file_paths(entries);
  if (scope == RewriteScope::kManifestsOnly) return rewrite;  // every file stays
  const DeleteTargets targets(metadata, entries);
  choose_data_files(entries, targets, options, rewrite);
  // A delete file is resolved when no live data file it applies to remains unrewritten.
  for (const SnapshotEntry& deletes : entries) {
    if (!is_data(deletes) && !targets.needed_beside(deletes, rewrite.rewritten)) {
      rewrite.resolved_deletes.insert(deletes.entry.data_file.file_path);
    }
  }
  return rewrite;
}

// The scan of the chosen files, grouped by spec and partition, with every delete file of the
// snapshot read, and the rows per output file of each data file's group.
struct RewriteScan {
  ScanPlan plan;
  std::vector<std::int64_t> rows_per_file;  // by data file of the plan
};

// Plans the scan of the chosen files. Rows per output file: the target size over the group's
// bytes per row, within the row limit. Marks every row of the chosen files dropped until written.
RewriteScan plan_rewrite_scan(const TableMetadata& metadata, const std::vector<SnapshotEntry>& entries,
                              const CompactionOptions& options, Rewrite& rewrite) {
  RewriteScan scan;
  scan.plan.snapshot_id = rewrite.read_snapshot_id;
  std::map<std::string, std::vector<const SnapshotEntry*>> groups;
  for (const SnapshotEntry& entry : entries) {
    const std::string& path = entry.entry.data_file.file_path;
    if (!is_data(entry)) {
      scan.plan.delete_files.push_back(LiveFile{entry.entry.data_file, data_sequence(entry), entry.spec_id});
    } else if (rewrite.rewritten.contains(path)) {
      groups[group_key(metadata, entry)].push_back(&entry);
    }
  }
  for (const auto& [key, files] : groups) {
    std::int64_t bytes = 0, rows = 0;
    for (const SnapshotEntry* file : files) {
      bytes += file->entry.data_file.file_size_in_bytes;
      rows += file->entry.data_file.record_count;
    }
    const std::int64_t per_row = std::max<std::int64_t>(1, rows == 0 ? 1 : bytes / rows);
    const std::int64_t limit = std::clamp<std::int64_t>(options.target_file_size_bytes / per_row, 1,
                                                        std::max<std::int64_t>(1, options.max_rows_per_file));
    for (const SnapshotEntry* file : files) {
      scan.plan.data_files.push_back(LiveFile{file->entry.data_file, data_sequence(*file), file->spec_id});
      scan.rows_per_file.push_back(limit);
      rewrite.moved[file->entry.data_file.file_path].assign(
          static_cast<std::size_t>(file->entry.data_file.record_count), kDroppedRow);
    }
  }
  return scan;
}

// Reads the chosen files with every delete applied and writes their rows again, group by group,
// in files of about the target size; records where each row went.
void write_rewritten_files(const TableMetadata& metadata, const std::vector<SnapshotEntry>& entries,
                           const CompactionOptions& options, Rewrite& rewrite, CompactionResult& result) {
  const RewriteScan scan = plan_rewrite_scan(metadata, entries, options, rewrite);
  const Schema& schema = metadata.current_schema();
  const std::string prefix = Uuid::random().to_string();
  std::vector<Row> rows;
  const LiveFile* group_file = nullptr;  // a file of the group being filled
  std::int64_t limit = 1;
  const auto flush = [&] {
    if (rows.empty()) return;
    const PartitionSpec& spec = *metadata.find_partition_spec(group_file->spec_id);
    const std::string location = data_directory(metadata, spec, group_file->file.partition) +
                                 fmt::format("{}-{:05}-compacted.parquet", prefix, rewrite.added.size());
    DataFile file = write_data_file(location, schema, group_file->file.partition, rows, options.files);
    result.bytes_written += file.file_size_in_bytes;
    result.rows_written += file.record_count;
    spdlog::debug("compaction: wrote {} ({} rows)", location, file.record_count);
    // The new files keep the data sequence number of the snapshot read: deletes committed
    // after it (equality deletes especially) still apply to the rows they hold.
    rewrite.added.push_back(SnapshotEntry{ManifestEntry{ManifestEntryStatus::kAdded, std::nullopt,
                                                        rewrite.read_sequence_number, std::nullopt, std::move(file)},
                                          group_file->spec_id});
    rows.clear();
  };
  scan_rows(scan.plan, schema, [&](const Row& row, const LiveFile& file, std::int64_t position) {
    const auto index = static_cast<std::size_t>(&file - scan.plan.data_files.data());
    if (group_file == nullptr || group_file->spec_id != file.spec_id ||
        group_file->file.partition != file.file.partition) {
      flush();
      group_file = &file;
      limit = scan.rows_per_file[index];
    }
    rewrite.moved[file.file.file_path][static_cast<std::size_t>(position)] =
        (static_cast<std::uint64_t>(rewrite.added.size()) << 32) | rows.size();
    rows.push_back(row);
    if (static_cast<std::int64_t>(rows.size()) >= limit) flush();
  });
  flush();
  failpoint::hit("iceberg.compaction.after_data_files");
}

// The rows of position delete files committed after the snapshot read that name rewritten files,
// moved onto the rows' new places: one new delete file per new data file they hit.
std::vector<SnapshotEntry> rebase_position_deletes(const TableMetadata& metadata,
                                                   const std::vector<SnapshotEntry>& live_now,
                                                   const CompactionOptions& options, const Rewrite& rewrite,
                                                   CompactionResult& result) {
  std::map<std::size_t, std::vector<PositionDelete>> by_new_file;
  for (const SnapshotEntry& entry : live_now) {
    const DataFile& file = entry.entry.data_file;
    if (file.content != FileContent::kPositionDeletes || rewrite.deletes_read.contains(file.file_path)) continue;
    for (const PositionDelete& row : read_position_deletes(file)) {
      const auto moved = rewrite.moved.find(row.file_path);
      if (moved == rewrite.moved.end()) continue;
      if (row.pos < 0 || static_cast<std::size_t>(row.pos) >= moved->second.size()) {
        fail("position delete file {}: row {} of {} is beyond its {} rows", file.file_path, row.pos, row.file_path,
             moved->second.size());
      }
      const std::uint64_t to = moved->second[static_cast<std::size_t>(row.pos)];
      if (to == kDroppedRow) continue;  // the row was deleted already
      const auto new_file = static_cast<std::size_t>(to >> 32);
      by_new_file[new_file].push_back(PositionDelete{rewrite.added[new_file].entry.data_file.file_path,
                                                     static_cast<std::int64_t>(to & 0xffffffff)});
    }
  }
  std::vector<SnapshotEntry> deletes;
  const std::string prefix = Uuid::random().to_string();
  for (auto& [new_file, rows] : by_new_file) {
    const SnapshotEntry& target = rewrite.added[new_file];
    const PartitionSpec& spec = *metadata.find_partition_spec(target.spec_id);
    const std::string location = data_directory(metadata, spec, target.entry.data_file.partition) +
                                 fmt::format("{}-{:05}-rebased-deletes.parquet", prefix, new_file);
    result.rebased_deletes += static_cast<std::int64_t>(rows.size());
    DataFile file =
        write_position_delete_file(location, target.entry.data_file.partition, std::move(rows), options.files);
    result.bytes_written += file.file_size_in_bytes;
    deletes.push_back(SnapshotEntry{
        ManifestEntry{ManifestEntryStatus::kAdded, std::nullopt, std::nullopt, std::nullopt, std::move(file)},
        target.spec_id});
  }
  return deletes;
}

std::string describe_ancestry_break(const TableMetadata& metadata, std::int64_t read_snapshot_id) {
  for (const Snapshot* s = metadata.current_snapshot(); s != nullptr;
       s = s->parent_snapshot_id ? metadata.find_snapshot(*s->parent_snapshot_id) : nullptr) {
    if (s->snapshot_id == read_snapshot_id) return {};
  }
  return fmt::format("snapshot {} that the rewrite read is no longer an ancestor of the current one", read_snapshot_id);
}

// The live entries of PARENT (BASE's current snapshot), which the rewrite can still commit on:
// throws StartOver when PARENT does not descend from the snapshot read or lost a rewritten file.
std::vector<SnapshotEntry> live_entries_to_rewrite(const TableMetadata& base, const Snapshot* parent,
                                                   const Rewrite& rewrite) {
  if (const std::string broken = describe_ancestry_break(base, rewrite.read_snapshot_id); !broken.empty()) {
    throw StartOver{broken};
  }
  std::vector<SnapshotEntry> live_now = live_entries(*parent);
  std::set<std::string> live_paths;
  for (const SnapshotEntry& entry : live_now) live_paths.insert(entry.entry.data_file.file_path);
  for (const std::string& path : rewrite.rewritten) {
    if (!live_paths.contains(path)) throw StartOver{fmt::format("data file {} was removed by another commit", path)};
  }
  return live_now;
}

// The entries of the replace snapshot, and what its summary counts of them.
struct ReplaceEntries {
  std::vector<SnapshotEntry> entries;  // every live file now: kept EXISTING, removed DELETED; then the added
  std::size_t rebased_delete_files = 0;
  std::int64_t removed_delete_files = 0, removed_position_deletes = 0, removed_equality_deletes = 0;
  std::int64_t removed_bytes = 0, added_bytes = 0;
};

// Marks the files of LIVE_NOW the rewrite replaces DELETED (the others EXISTING), and counts them.
void mark_removed_files(const std::vector<SnapshotEntry>& live_now, const Rewrite& rewrite, std::int64_t snapshot_id,
                        ReplaceEntries& replace) {
  for (const SnapshotEntry& entry : live_now) {
    SnapshotEntry kept = entry;
    const DataFile& file = entry.entry.data_file;
    const bool removed =
        rewrite.rewritten.contains(file.file_path) || rewrite.resolved_deletes.contains(file.file_path);
    kept.entry.status = removed ? ManifestEntryStatus::kDeleted : ManifestEntryStatus::kExisting;
    if (removed) {
      kept.entry.snapshot_id = snapshot_id;
      replace.removed_bytes += file.file_size_in_bytes;
      if (file.content != FileContent::kData) {
        ++replace.removed_delete_files;
        (file.content == FileContent::kPositionDeletes ? replace.removed_position_deletes
                                                       : replace.removed_equality_deletes) += file.record_count;
      }
    }
    replace.entries.push_back(std::move(kept));
  }
}

// The replace snapshot's entries: LIVE_NOW marked, then the rewritten files and the position
// deletes committed meanwhile, rebased onto them (written here).
ReplaceEntries replace_entries(const TableMetadata& metadata, const std::vector<SnapshotEntry>& live_now,
                               const CompactionOptions& options, const Rewrite& rewrite, std::int64_t snapshot_id,
                               CompactionResult& result) {
  ReplaceEntries replace;
  mark_removed_files(live_now, rewrite, snapshot_id, replace);
  std::vector<SnapshotEntry> added = rewrite.added;
  const std::vector<SnapshotEntry> rebased = rebase_position_deletes(metadata, live_now, options, rewrite, result);
  replace.rebased_delete_files = rebased.size();
  added.insert(added.end(), rebased.begin(), rebased.end());
  for (SnapshotEntry& entry : added) {
    entry.entry.snapshot_id = snapshot_id;
    replace.added_bytes += entry.entry.data_file.file_size_in_bytes;
    replace.entries.push_back(entry);
  }
  return replace;
}

// The replace snapshot's summary: PARENT's position carried forward, this rewrite's counts and the
// totals of the files live after it.
std::map<std::string, std::string> replace_summary(const Snapshot* parent, const CompactionOptions& options,
                                                   const std::string& prefix, const Rewrite& rewrite,
                                                   const ReplaceEntries& replace, const CompactionResult& result) {
  std::map<std::string, std::string> summary = carried_summary(parent);
  summary[kWriterIdProperty] = options.writer_id;
  summary[kCommitIdProperty] = "compact:" + prefix;
  summary["added-data-files"] = std::to_string(rewrite.added.size());
  summary["deleted-data-files"] = std::to_string(rewrite.rewritten.size());
  summary["added-records"] = std::to_string(result.rows_written);
  summary["deleted-records"] = std::to_string(rewrite.rows_read_from_files);
  summary["added-delete-files"] = std::to_string(replace.rebased_delete_files);
  summary["added-position-deletes"] = std::to_string(result.rebased_deletes);
  summary["removed-delete-files"] = std::to_string(replace.removed_delete_files);
  summary["removed-position-deletes"] = std::to_string(replace.removed_position_deletes);
  summary["removed-equality-deletes"] = std::to_string(replace.removed_equality_deletes);
  summary["added-files-size"] = std::to_string(replace.added_bytes);
  summary["removed-files-size"] = std::to_string(replace.removed_bytes);
  std::vector<SnapshotEntry> live_after;
  for (const SnapshotEntry& entry : replace.entries) {
    if (entry.entry.status != ManifestEntryStatus::kDeleted) live_after.push_back(entry);
  }
  for (auto& [key, value] : snapshot_totals(live_after)) summary[key] = std::move(value);
  return summary;
}

// Builds the replace snapshot on BASE (the snapshot read, or a later one) and commits it.
LoadedTable commit_rewrite(Catalog& catalog, const LoadedTable& base, const Rewrite& rewrite,
                           const CompactionOptions& options, CompactionResult& result) {
  const TableMetadata& metadata = base.metadata;
  const Snapshot* parent = metadata.current_snapshot();
  const std::vector<SnapshotEntry> live_now = live_entries_to_rewrite(metadata, parent, rewrite);
  const std::int64_t snapshot_id = metadata.new_snapshot_id();
  const std::int64_t sequence_number = metadata.next_sequence_number();
  result.rebased_deletes = 0;
  const ReplaceEntries replace = replace_entries(metadata, live_now, options, rewrite, snapshot_id, result);

  const std::string prefix = Uuid::random().to_string();
  const std::vector<ManifestFile> manifests = write_merged_manifests(metadata, prefix, snapshot_id, replace.entries);
  const std::string manifest_list =
      join_location(metadata.location, fmt::format("metadata/snap-{}-1-{}.avro", snapshot_id, prefix));
  write_manifest_list(manifest_list, snapshot_id, parent->snapshot_id, sequence_number, manifests);
  failpoint::hit("iceberg.compaction.after_manifests");

  Snapshot snapshot;
  snapshot.snapshot_id = snapshot_id;
  snapshot.parent_snapshot_id = parent->snapshot_id;
  snapshot.sequence_number = sequence_number;
  snapshot.timestamp_ms = std::max(unix_millis(), metadata.last_updated_ms);
  snapshot.manifest_list = manifest_list;
  snapshot.schema_id = metadata.current_schema_id;
  snapshot.operation = SnapshotOperation::kReplace;
  snapshot.summary = replace_summary(parent, options, prefix, rewrite, replace, result);

  TableMetadata next = metadata;
  next.add_snapshot(std::move(snapshot));
  LoadedTable committed = publish(catalog, base, std::move(next));
  result.snapshot_id = snapshot_id;
  result.rewritten_data_files = static_cast<std::int64_t>(rewrite.rewritten.size());
  result.added_data_files = static_cast<std::int64_t>(rewrite.added.size());
  result.removed_delete_files = replace.removed_delete_files;
  result.rows_dropped = rewrite.rows_read_from_files - result.rows_written;
  result.manifests_after = static_cast<std::int64_t>(manifests.size());
  return committed;
}

CompactionResult run_rewrite(Catalog& catalog, const TableIdentifier& id, const CompactionOptions& options,
                             RewriteScope scope) {
  const auto started = std::chrono::steady_clock::now();
  CompactionResult result;
  std::optional<Rewrite> rewrite;
  LoadedTable table = catalog.load_table(id);
  for (result.attempts = 1;; ++result.attempts) {
    try {
      const Snapshot* current = table.metadata.current_snapshot();
      if (current == nullptr) return result;
      if (!rewrite) {
        const std::vector<SnapshotEntry> entries = live_entries(*current);
        const int attempts = result.attempts;
        result = CompactionResult{};
        result.attempts = attempts;
        result.manifests_before = static_cast<std::int64_t>(read_manifest_list(current->manifest_list).size());
        rewrite = plan_rewrite(table.metadata, *current, entries, options, scope);
        if (rewrite->rewritten.empty() && rewrite->resolved_deletes.empty() && !manifests_need_merging(*current)) {
          spdlog::info("table {}: nothing to compact", id.to_string());
          result.manifests_after = result.manifests_before;
          return result;
        }
        write_rewritten_files(table.metadata, entries, options, *rewrite, result);
      }
      const std::int64_t bytes_before_commit = result.bytes_written;
      try {
        commit_rewrite(catalog, table, *rewrite, options, result);
      } catch (...) {
        result.bytes_written = bytes_before_commit;  // the rebased deletes are written again
        throw;
      }
      spdlog::info(
          "table {}: compacted {} data files into {} ({} rows, {} deleted rows dropped), removed {} delete files, "
          "manifests {} -> {}, {} concurrent deletes rebased, {} attempt(s), {:.1f} s",
          id.to_string(), result.rewritten_data_files, result.added_data_files, result.rows_written,
          result.rows_dropped, result.removed_delete_files, result.manifests_before, result.manifests_after,
          result.rebased_deletes, result.attempts,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      return result;
    } catch (const CommitConflict& conflict) {
      if (result.attempts >= options.max_attempts) {
        fail("table {}: compaction gave up after {} attempts, writers kept committing: {}", id.to_string(),
             result.attempts, conflict.what());
      }
      spdlog::info("table {}: a writer committed during the compaction; rebasing onto its snapshot", id.to_string());
    } catch (const StartOver& start_over) {
      if (result.attempts >= options.max_attempts) {
        fail("table {}: compaction gave up after {} attempts: {}", id.to_string(), result.attempts, start_over.reason);
      }
      spdlog::info("table {}: compaction starts over: {}", id.to_string(), start_over.reason);
      rewrite.reset();
    }
    table = catalog.load_table(id);
  }
}

}  // namespace

CompactionResult compact_table(Catalog& catalog, const TableIdentifier& id, const CompactionOptions& options) {
  if (options.target_file_size_bytes < 1) fail("compaction: target_file_size_bytes must be positive");
  if (options.max_attempts < 1) fail("compaction: max_attempts must be positive");
  return run_rewrite(catalog, id, options, RewriteScope::kDataFiles);
}

CompactionResult rewrite_manifests(Catalog& catalog, const TableIdentifier& id, const CompactionOptions& options) {
  if (options.max_attempts < 1) fail("rewrite_manifests: max_attempts must be positive");
  return run_rewrite(catalog, id, options, RewriteScope::kManifestsOnly);
}

}  // namespace binberg::iceberg
