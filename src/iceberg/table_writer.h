#pragma once

// Writing changes to one table as one new snapshot.
//
// Upsert mode (tables with identifier fields): a batch of keyed changes becomes new data files
// holding the latest image of each changed key, plus position delete files for the rows an older
// snapshot holds for those keys, found through the primary-key index. A row replaced within the
// same batch is never written. Append mode (changelog tables) only adds rows.
//
// Invariants enforced here:
//   - after every commit, each key has at most one live row (the index rejects a table that
//     breaks this when it is rebuilt, and the writer deletes a key's old row before it writes the
//     new one);
//   - nothing becomes visible before the catalog commit: data, delete, manifest and metadata files
//     are written first under fresh names, and the catalog's compare-and-swap publishes them;
//   - the index changes only after the commit succeeded, so it always describes the table's
//     current snapshot; a failed commit leaves the writer unusable until it is reopened.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "iceberg/arrow_rows.h"
#include "iceberg/catalog.h"
#include "iceberg/data_file_writer.h"
#include "iceberg/primary_key_index.h"
#include "iceberg/table_metadata.h"

namespace binberg::iceberg {

enum class WriteMode { kUpsert, kAppend };

// Snapshot summary keys binberg adds to every snapshot it commits.
inline constexpr const char* kWriterIdProperty = "binberg.writer-id";
inline constexpr const char* kCommitIdProperty = "binberg.commit-id";

struct TableWriterOptions {
  std::string writer_id = "binberg";
  DataFileOptions files;
  // Rows per data file; a batch larger than this is split (Parquet row groups split further).
  std::int64_t max_rows_per_file = 1'000'000;
};

struct CommitStats {
  std::int64_t added_rows = 0;
  std::int64_t deleted_rows = 0;  // position deletes written
  std::int64_t data_files = 0;
  std::int64_t delete_files = 0;
  std::int64_t bytes_written = 0;  // data and delete files
};

// The files of one table's next snapshot, written but not yet visible.
struct PreparedCommit {
  TableIdentifier id;
  std::string base_metadata_location;
  std::string new_metadata_location;
  TableMetadata metadata;
  CommitStats stats;
};

class TableWriter {
 public:
  // Rebuilds the primary-key index from TABLE's current snapshot (upsert mode). Throws Error when
  // an upsert table has no identifier fields, has equality deletes, or holds a key twice.
  TableWriter(LoadedTable table, WriteMode mode, TableWriterOptions options = {});

  // ROW has a value for every column of the current schema.
  void upsert(Row row);
  // ROW needs its identifier columns only; deleting an absent key is counted, not an error.
  void remove(const Row& row);
  void append(Row row);

  // Makes SCHEMA (a valid evolution of the current schema, see validate_schema_evolution) the
  // schema of the rows buffered from now on and of the next commit, which also sets PROPERTIES.
  // Needs an empty batch. Nothing is visible before that commit.
  void evolve_schema(const Schema& schema, const std::map<std::string, std::string>& properties);

  std::size_t pending_changes() const { return pending_changes_; }
  std::int64_t absent_key_deletes() const { return absent_key_deletes_; }

  // Writes the pending changes' files and the next metadata file (version + 1), with
  // SUMMARY_PROPERTIES (and the writer id and COMMIT_ID) in the snapshot summary.
  PreparedCommit prepare(const std::string& commit_id, const std::map<std::string, std::string>& summary_properties,
                         std::int64_t now_ms);
  // The catalog published COMMIT: the index and base table move to it, the batch is cleared.
  void committed(const PreparedCommit& commit);

  // After a failed commit: refuse further use, since the table may have moved on.
  void poison() { poisoned_ = true; }

  const LoadedTable& table() const { return table_; }
  const PrimaryKeyIndex& index() const { return index_; }
  WriteMode mode() const { return mode_; }

 private:
  struct PendingRow {
    std::optional<Row> row;  // nullopt: deleted later in the same batch
    std::string key;         // upsert mode only
  };

  void rebuild_index();
  void locate_key_columns();
  std::string key_of(const Row& row) const;
  void delete_committed_row(const std::string& key);
  void check_usable() const;

  LoadedTable table_;
  WriteMode mode_;
  TableWriterOptions options_;
  std::optional<Schema> key_schema_;
  std::vector<std::size_t> key_columns_;
  PrimaryKeyIndex index_;

  std::vector<PendingRow> pending_rows_;
  std::unordered_map<std::string, std::size_t> pending_by_key_;
  // Committed rows this batch deletes, by key (so a key is deleted once per batch).
  std::unordered_map<std::string, PrimaryKeyIndex::Location> deleted_committed_;
  std::size_t pending_changes_ = 0;
  std::int64_t absent_key_deletes_ = 0;

  // Filled by prepare(), applied by committed().
  struct PreparedIndexUpdate {
    std::string metadata_location;
    std::vector<IndexedFile> new_files;
    std::vector<std::pair<std::string, std::pair<std::size_t, std::uint32_t>>> new_locations;  // key -> (new file, pos)
  };
  std::optional<PreparedIndexUpdate> prepared_;
  bool poisoned_ = false;
};

// Publishes the prepared COMMITS of WRITERS in one catalog transaction: every table moves or none
// does. On failure (CommitConflict, lost connection) the writers are poisoned and the error
// propagates; a commit that landed despite an error is recognized and completed.
void commit_tables(Catalog& catalog, const std::vector<TableWriter*>& writers,
                   const std::vector<PreparedCommit>& commits);

}  // namespace binberg::iceberg
