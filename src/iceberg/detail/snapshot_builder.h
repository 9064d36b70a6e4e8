#pragma once

// The next snapshot of a table that one TableWriter batch makes (table_writer.h), built in steps:
// the batch's data files, position delete files for the older rows it replaces, the manifests and
// manifest list, then the next metadata file. Each step only writes files under fresh names;
// nothing is visible before the catalog commit publishes the metadata file. The writer calls the
// steps in this order, with its crash failpoints between them.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "iceberg/detail/data_file_writer.h"
#include "iceberg/detail/primary_key_index.h"
#include "iceberg/table_writer.h"

namespace binberg::iceberg {

class SnapshotBuilder {
 public:
  // Draws the snapshot's id and the prefix of the files' names. TABLE and OPTIONS outlive the builder.
  SnapshotBuilder(const LoadedTable& table, const TableWriterOptions& options);

  // Adds FILES, the data files the batch wrote (in the table's default spec). Every one is added,
  // also one whose rows were all replaced later: position deletes hide them.
  void add_data_files(const std::vector<DataFile>& files);
  // Deletes row POSITION of FILE, a data file of the table; FILE outlives the builder.
  void delete_row(const IndexedFile& file, std::uint32_t position);
  // Deletes row POSITION of the ORDINAL-th data file add_data_files added.
  void delete_row_of_added_file(std::size_t ordinal, std::uint32_t position);
  // Writes one position delete file per (spec, partition) of the deleted rows.
  void write_delete_files();
  // Writes the new manifests and the manifest list: the new manifests, then the parent's.
  void write_manifests();
  // Writes the next metadata file (version + 1) holding the snapshot, whose summary has
  // SUMMARY_PROPERTIES, the writer id, COMMIT_ID, the added counts and the table's totals.
  PreparedCommit write_metadata_file(const std::string& commit_id,
                                     const std::map<std::string, std::string>& summary_properties,
                                     std::int64_t now_ms) const;

 private:
  // The position deletes of one (spec, partition), with a data file of that partition.
  struct PartitionDeletes {
    const IndexedFile* file = nullptr;
    std::vector<PositionDelete> deletes;
  };

  std::map<std::string, std::string> snapshot_summary(
      const std::string& commit_id, const std::map<std::string, std::string>& summary_properties) const;

  const LoadedTable& table_;
  const TableWriterOptions& options_;
  std::int64_t snapshot_id_ = 0;
  std::int64_t sequence_number_ = 0;
  std::string file_prefix_;
  CommitStats stats_;

  std::vector<ManifestEntry> data_entries_;
  std::vector<IndexedFile> added_files_;
  std::map<std::pair<std::int32_t, std::string>, PartitionDeletes> deletes_by_partition_;
  std::map<std::int32_t, std::vector<ManifestEntry>> delete_entries_by_spec_;
  std::string manifest_list_;
};

}  // namespace binberg::iceberg
