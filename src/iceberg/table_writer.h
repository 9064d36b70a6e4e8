#pragma once

// Writing changes to one table as one new snapshot.
//
// Upsert mode (tables with identifier fields): a batch of keyed changes becomes new data files
// holding the latest image of each changed key, plus position delete files for the rows an older
// snapshot holds for those keys, found through the primary-key index. A row replaced within the
// same batch is never written while it is buffered. Append mode (changelog tables) only adds rows.
//
// Memory: a batch larger than max_buffered_bytes is written to data files early ("spilled"); the
// files stay invisible until the batch's commit, and a spilled row the batch replaces later gets a
// position delete in the same snapshot (it applies to data files of its own sequence number). So a
// batch of any size — one huge source transaction — is still one snapshot, while the rows held in
// memory stay bounded; what grows with the batch is one key and file position per changed key.
//
// Index memory: the primary-key index costs about 80 bytes per key plus the key bytes (bench/table_bench). Past
// max_index_bytes the writer drops it and locates the keys a batch changes when it commits, by
// scanning the key column of the data files that may hold them (files whose key bounds exclude
// every changed key are skipped, so tables keyed by increasing integers read few files). Memory
// then grows with the batch, not the table; commits read more.
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
#include "iceberg/detail/data_file_writer.h"
#include "iceberg/detail/primary_key_index.h"
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
  // Buffered rows (estimated in-memory size) beyond which the batch is written to data files early.
  std::size_t max_buffered_bytes = 256u << 20;
  // Estimated primary-key index size beyond which keys are located by scanning at commit instead.
  std::size_t max_index_bytes = std::size_t{2} << 30;
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
  // The estimated size of the rows buffered in memory, and how many times this batch spilled.
  std::size_t buffered_bytes() const { return buffered_bytes_; }
  std::size_t spills() const { return spills_; }
  std::int64_t absent_key_deletes() const { return absent_key_deletes_; }
  // Whether the index outgrew max_index_bytes (keys are then located at commit), and how many data
  // files those lookups read.
  bool locates_keys_by_scan() const { return key_scan_; }
  std::int64_t files_scanned_for_keys() const { return files_scanned_for_keys_; }

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
  // A row of a data file this batch wrote: (ordinal in written_files_, position).
  using WrittenLocation = std::pair<std::size_t, std::uint32_t>;

  void rebuild_index();
  // Drops the index when it outgrew its bound: keys are located at commit from then on.
  void bound_index();
  void locate_key_columns();
  Row key_row(const Row& row) const;
  // Finds the committed rows of the keys the batch changed and has not located yet (key-scan mode).
  void locate_changed_keys();
  enum class OlderRow { kNone, kDeleted, kLocatedAtCommit };
  // Moves an older row of KEY (ROW's key) out of this batch or the table.
  OlderRow delete_older_row(const std::string& key, const Row& row);
  void buffer(PendingRow pending);
  // Writes the buffered rows that survive to data files (by partition, in batch order) and empties
  // the buffer; their keys then point into those files.
  void write_buffered_rows();
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
  // The batch's data files written so far, the keys whose latest row is in them, and their rows
  // the batch replaced after writing them.
  std::vector<DataFile> written_files_;
  std::unordered_map<std::string, WrittenLocation> written_by_key_;
  std::vector<WrittenLocation> deleted_written_;
  std::size_t pending_changes_ = 0;
  std::size_t buffered_bytes_ = 0;
  std::size_t spills_ = 0;
  std::int64_t absent_key_deletes_ = 0;
  // Key-scan mode: the keys whose committed row is found at commit (with their key values), and
  // those of them the batch only removed (absent ones are counted then).
  bool key_scan_ = false;
  std::unordered_map<std::string, Row> unlocated_;
  std::vector<std::string> unlocated_removes_;
  std::int64_t files_scanned_for_keys_ = 0;

  // The metadata file prepare() wrote, until committed().
  std::optional<std::string> prepared_;
  bool poisoned_ = false;
};

// Publishes the prepared COMMITS of WRITERS in one catalog transaction: every table moves or none
// does. On failure (CommitConflict, lost connection) the writers are poisoned and the error
// propagates; a commit that landed despite an error is recognized and completed.
void commit_tables(Catalog& catalog, const std::vector<TableWriter*>& writers,
                   const std::vector<PreparedCommit>& commits);

}  // namespace binberg::iceberg
