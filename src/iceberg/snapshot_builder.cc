#include "iceberg/detail/snapshot_builder.h"

#include <algorithm>

#include "core/error.h"
#include "iceberg/detail/table_files.h"
#include "iceberg/detail/uuid.h"
#include "iceberg/manifest_list.h"

namespace binberg::iceberg {
namespace {

// A summary number of SNAPSHOT: 0 without a snapshot, -1 when absent or unreadable.
std::int64_t summary_number(const Snapshot* snapshot, const std::string& key) {
  if (snapshot == nullptr) return 0;
  auto it = snapshot->summary.find(key);
  if (it == snapshot->summary.end()) return -1;
  try {
    return std::stoll(it->second);
  } catch (const std::exception&) {
    return -1;
  }
}

// A total-* property carried on from the parent; left out when the parent's is unknown.
void add_total(std::map<std::string, std::string>& summary, const Snapshot* parent, const std::string& key,
               std::int64_t added, std::int64_t removed = 0) {
  const std::int64_t before = summary_number(parent, key);
  if (before >= 0) summary[key] = std::to_string(before + added - removed);
}

SnapshotOperation operation_of(const CommitStats& stats) {
  const bool adds = stats.data_files > 0;
  const bool deletes = stats.delete_files > 0;
  return adds && deletes ? SnapshotOperation::kOverwrite
         : deletes       ? SnapshotOperation::kDelete
                         : SnapshotOperation::kAppend;
}

}  // namespace

SnapshotBuilder::SnapshotBuilder(const LoadedTable& table, const TableWriterOptions& options)
    : table_(table),
      options_(options),
      snapshot_id_(table.metadata.new_snapshot_id()),
      sequence_number_(table.metadata.next_sequence_number()),
      file_prefix_(Uuid::random().to_string()) {}

void SnapshotBuilder::add_data_files(const std::vector<DataFile>& files) {
  const std::int32_t spec_id = table_.metadata.default_spec().spec_id();
  for (const DataFile& file : files) {
    stats_.added_rows += file.record_count;
    stats_.bytes_written += file.file_size_in_bytes;
    ++stats_.data_files;
    data_entries_.push_back(ManifestEntry{ManifestEntryStatus::kAdded, snapshot_id_, std::nullopt, std::nullopt, file});
  }
  for (const DataFile& file : files) added_files_.push_back(IndexedFile{file.file_path, spec_id, file.partition});
}

void SnapshotBuilder::delete_row(const IndexedFile& file, std::uint32_t position) {
  const PartitionSpec* file_spec = table_.metadata.find_partition_spec(file.spec_id);
  if (file_spec == nullptr) {
    fail("table {}: data file {} has unknown spec {}", table_.id.to_string(), file.path, file.spec_id);
  }
  const std::vector<TypePtr> types = partition_types(*file_spec, table_.metadata.current_schema());
  auto& group = deletes_by_partition_[{file.spec_id, partition_key(types, file.partition)}];
  group.file = &file;
  group.deletes.push_back(PositionDelete{file.path, position});
}

void SnapshotBuilder::delete_row_of_added_file(std::size_t ordinal, std::uint32_t position) {
  delete_row(added_files_[ordinal], position);
}

void SnapshotBuilder::write_delete_files() {
  const TableMetadata& base = table_.metadata;
  int file_number = 0;
  for (auto& [spec_and_key, group] : deletes_by_partition_) {
    const PartitionSpec& file_spec = *base.find_partition_spec(group.file->spec_id);
    const std::string directory = data_directory(base, file_spec, group.file->partition);
    const std::string location = directory + fmt::format("{}-{:05}-deletes.parquet", file_prefix_, file_number++);
    DataFile file =
        write_position_delete_file(location, group.file->partition, std::move(group.deletes), options_.files);
    stats_.deleted_rows += file.record_count;
    stats_.bytes_written += file.file_size_in_bytes;
    ++stats_.delete_files;
    delete_entries_by_spec_[group.file->spec_id].push_back(
        ManifestEntry{ManifestEntryStatus::kAdded, snapshot_id_, std::nullopt, std::nullopt, std::move(file)});
  }
}

void SnapshotBuilder::write_manifests() {
  const TableMetadata& base = table_.metadata;
  const Schema& schema = base.current_schema();
  std::vector<ManifestFile> manifests;
  int manifest_number = 0;
  const auto manifest_location = [&] {
    return join_location(base.location, fmt::format("metadata/{}-m{}.avro", file_prefix_, manifest_number++));
  };
  if (!data_entries_.empty()) {
    manifests.push_back(write_manifest(manifest_location(), schema, base.default_spec(), ManifestContent::kData,
                                       snapshot_id_, data_entries_));
  }
  for (const auto& [spec_id, entries] : delete_entries_by_spec_) {
    manifests.push_back(write_manifest(manifest_location(), schema, *base.find_partition_spec(spec_id),
                                       ManifestContent::kDeletes, snapshot_id_, entries));
  }
  // The parent's manifests stay as they are (a fast append; compaction merges them).
  if (const Snapshot* parent = base.current_snapshot(); parent != nullptr) {
    for (ManifestFile& manifest : read_manifest_list(parent->manifest_list)) {
      // A manifest that only records removals (a compaction's) has done its job for the snapshot
      // that made them; counts are trusted only when they say so (old writers leave them 0).
      const bool only_removals =
          manifest.deleted_files_count > 0 && manifest.added_files_count == 0 && manifest.existing_files_count == 0;
      if (!only_removals) manifests.push_back(std::move(manifest));
    }
  }
  manifest_list_ = join_location(base.location, fmt::format("metadata/snap-{}-1-{}.avro", snapshot_id_, file_prefix_));
  write_manifest_list(manifest_list_, snapshot_id_, base.current_snapshot_id, sequence_number_, manifests);
}

std::map<std::string, std::string> SnapshotBuilder::snapshot_summary(
    const std::string& commit_id, const std::map<std::string, std::string>& summary_properties) const {
  const Snapshot* parent = table_.metadata.current_snapshot();
  std::map<std::string, std::string> summary = summary_properties;
  summary[kWriterIdProperty] = options_.writer_id;
  summary[kCommitIdProperty] = commit_id;
  summary["added-data-files"] = std::to_string(stats_.data_files);
  summary["added-records"] = std::to_string(stats_.added_rows);
  summary["added-delete-files"] = std::to_string(stats_.delete_files);
  summary["added-position-delete-files"] = std::to_string(stats_.delete_files);
  summary["added-position-deletes"] = std::to_string(stats_.deleted_rows);
  summary["added-files-size"] = std::to_string(stats_.bytes_written);
  add_total(summary, parent, "total-data-files", stats_.data_files);
  add_total(summary, parent, "total-delete-files", stats_.delete_files);
  add_total(summary, parent, "total-records", stats_.added_rows);
  add_total(summary, parent, "total-position-deletes", stats_.deleted_rows);
  add_total(summary, parent, "total-equality-deletes", 0);
  add_total(summary, parent, "total-files-size", stats_.bytes_written);
  return summary;
}

PreparedCommit SnapshotBuilder::write_metadata_file(const std::string& commit_id,
                                                    const std::map<std::string, std::string>& summary_properties,
                                                    std::int64_t now_ms) const {
  const TableMetadata& base = table_.metadata;
  Snapshot snapshot;
  snapshot.snapshot_id = snapshot_id_;
  snapshot.parent_snapshot_id = base.current_snapshot_id;
  snapshot.sequence_number = sequence_number_;
  snapshot.timestamp_ms = std::max(now_ms, base.last_updated_ms);
  snapshot.manifest_list = manifest_list_;
  snapshot.schema_id = base.current_schema().schema_id();
  snapshot.operation = operation_of(stats_);
  snapshot.summary = snapshot_summary(commit_id, summary_properties);

  TableMetadata next = base;
  next.add_snapshot(std::move(snapshot));
  std::string location = write_next_metadata_file(table_, next);
  return PreparedCommit{table_.id, table_.metadata_location, std::move(location), std::move(next), stats_};
}

}  // namespace binberg::iceberg
