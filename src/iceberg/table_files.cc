#include "iceberg/detail/table_files.h"

#include <algorithm>

#include "core/error.h"
#include "iceberg/manifest_list.h"
#include "iceberg/metadata_file.h"
#include "iceberg/single_value.h"
#include "iceberg/table_writer.h"

namespace binberg::iceberg {

std::vector<SnapshotEntry> live_entries(const Snapshot& snapshot) {
  std::vector<SnapshotEntry> entries;
  for (const ManifestFile& manifest : read_manifest_list(snapshot.manifest_list)) {
    for (ManifestEntry& entry : read_manifest(manifest)) {
      if (entry.status == ManifestEntryStatus::kDeleted) continue;
      if (!entry.sequence_number || !entry.file_sequence_number || !entry.snapshot_id) {
        fail("manifest {}: entry {} has no sequence numbers or snapshot id", manifest.manifest_path,
             entry.data_file.file_path);
      }
      entries.push_back(SnapshotEntry{std::move(entry), manifest.partition_spec_id});
    }
  }
  return entries;
}

std::set<std::string> files_of_snapshots(const std::vector<const Snapshot*>& snapshots, EntryFilter filter) {
  std::set<std::string> files;
  std::set<std::string> manifests_read;
  for (const Snapshot* snapshot : snapshots) {
    files.insert(snapshot->manifest_list);
    for (const ManifestFile& manifest : read_manifest_list(snapshot->manifest_list)) {
      files.insert(manifest.manifest_path);
      if (!manifests_read.insert(manifest.manifest_path).second) continue;  // shared by many snapshots
      for (const ManifestEntry& entry : read_manifest(manifest)) {
        if (filter == EntryFilter::kAll || entry.status != ManifestEntryStatus::kDeleted)
          files.insert(entry.data_file.file_path);
      }
    }
  }
  return files;
}

std::vector<ManifestFile> write_merged_manifests(const TableMetadata& metadata, const std::string& prefix,
                                                 std::int64_t snapshot_id, const std::vector<SnapshotEntry>& entries) {
  std::map<std::pair<std::int32_t, ManifestContent>, std::vector<ManifestEntry>> groups;
  for (const SnapshotEntry& entry : entries) {
    const ManifestContent content =
        entry.entry.data_file.content == FileContent::kData ? ManifestContent::kData : ManifestContent::kDeletes;
    groups[{entry.spec_id, content}].push_back(entry.entry);
  }
  std::vector<ManifestFile> manifests;
  int number = 0;
  for (const auto& [key, group] : groups) {
    const PartitionSpec* spec = metadata.find_partition_spec(key.first);
    if (spec == nullptr) fail("table {}: a manifest has unknown partition spec {}", metadata.location, key.first);
    const std::string location =
        join_location(metadata.location, fmt::format("metadata/{}-m{}.avro", prefix, number++));
    manifests.push_back(write_manifest(location, metadata.current_schema(), *spec, key.second, snapshot_id, group));
  }
  return manifests;
}

std::map<std::string, std::string> snapshot_totals(const std::vector<SnapshotEntry>& entries) {
  std::int64_t data_files = 0, delete_files = 0, records = 0, position_deletes = 0, equality_deletes = 0, bytes = 0;
  for (const SnapshotEntry& entry : entries) {
    const DataFile& file = entry.entry.data_file;
    bytes += file.file_size_in_bytes;
    switch (file.content) {
      case FileContent::kData:
        ++data_files;
        records += file.record_count;
        break;
      case FileContent::kPositionDeletes:
        ++delete_files;
        position_deletes += file.record_count;
        break;
      case FileContent::kEqualityDeletes:
        ++delete_files;
        equality_deletes += file.record_count;
        break;
    }
  }
  return {{"total-data-files", std::to_string(data_files)},
          {"total-delete-files", std::to_string(delete_files)},
          {"total-records", std::to_string(records)},
          {"total-position-deletes", std::to_string(position_deletes)},
          {"total-equality-deletes", std::to_string(equality_deletes)},
          {"total-files-size", std::to_string(bytes)}};
}

std::map<std::string, std::string> carried_summary(const Snapshot* parent) {
  std::map<std::string, std::string> carried;
  if (parent == nullptr) return carried;
  for (const auto& [key, value] : parent->summary) {
    if (key.starts_with("binberg.") && key != kWriterIdProperty && key != kCommitIdProperty) carried[key] = value;
  }
  return carried;
}

std::string write_next_metadata_file(const LoadedTable& base, TableMetadata& next) {
  next.record_previous_metadata_file(base.metadata_location, base.metadata.last_updated_ms);
  const std::int32_t version = metadata_file_version(base.metadata_location)
                                   .value_or(static_cast<std::int32_t>(base.metadata.metadata_log.size())) +
                               1;
  return write_metadata_file(next, version);
}

void commit_or_recognize(Catalog& catalog, const std::vector<TableCommit>& commits) {
  try {
    catalog.commit(commits);
  } catch (const CatalogUnavailable&) {
    // The catalog settles a lost answer itself whenever its database answers (catalog_retry.h);
    // asking again now would only wait out another retry budget. The caller reads the tables.
    throw;
  } catch (const Error&) {
    bool landed = true;
    try {
      for (const auto& commit : commits)
        landed = landed && catalog.metadata_location(commit.id) == commit.new_metadata_location;
    } catch (const Error&) {
      landed = false;
    }
    if (!landed) throw;
  }
}

LoadedTable publish(Catalog& catalog, const LoadedTable& base, TableMetadata next) {
  const std::string location = write_next_metadata_file(base, next);
  commit_or_recognize(catalog, {TableCommit{base.id, base.metadata_location, location}});
  return LoadedTable{base.id, location, std::move(next)};
}

std::string join_location(const std::string& location, const std::string& relative) {
  return !location.empty() && location.back() == '/' ? location + relative : location + "/" + relative;
}

std::vector<TypePtr> partition_types(const PartitionSpec& spec, const Schema& schema) {
  std::vector<TypePtr> types;
  for (const auto& field : spec.fields()) {
    const NestedField* source = schema.find_field(field.source_id);
    if (source == nullptr)
      fail("partition field {}: source field {} is not in the schema", field.name, field.source_id);
    types.push_back(field.transform.result_type(source->type));
  }
  return types;
}

std::string partition_key(const std::vector<TypePtr>& types, const std::vector<Literal>& values) {
  std::string key;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::holds_alternative<std::monostate>(values[i])) {
      key += "n";
      continue;
    }
    const Bytes bytes = to_single_value(*types[i], values[i]);
    key += fmt::format("v{}:", bytes.size());
    key.append(bytes.begin(), bytes.end());
  }
  return key;
}

std::string data_directory(const TableMetadata& metadata, const PartitionSpec& spec,
                           const std::vector<Literal>& partition) {
  const std::vector<TypePtr> types = partition_types(spec, metadata.current_schema());
  std::string path = "data/";
  for (std::size_t i = 0; i < partition.size(); ++i) {
    std::string text;
    if (std::holds_alternative<std::monostate>(partition[i])) {
      text = "null";
    } else if (const auto* v32 = std::get_if<std::int32_t>(&partition[i])) {
      text = std::to_string(*v32);
    } else if (const auto* v64 = std::get_if<std::int64_t>(&partition[i])) {
      text = std::to_string(*v64);
    } else {
      // Other values as hex of their single-value form: always a safe file name.
      for (std::uint8_t byte : to_single_value(*types[i], partition[i])) text += fmt::format("{:02x}", byte);
    }
    path += fmt::format("{}={}/", spec.fields()[i].name, text);
  }
  return join_location(metadata.location, path);
}

}  // namespace binberg::iceberg
