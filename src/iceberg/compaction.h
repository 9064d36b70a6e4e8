#pragma once

// Compaction (rewrite_data_files) and manifest merging (rewrite_manifests): new snapshots with the
// same rows in fewer, larger files.
//
// A partition is rewritten when delete files apply to its data files or when it holds at least
// min_input_files small ones; its small and delete-affected files are read with every delete
// applied and written again, bin-packed towards the target size. Delete files whose every target
// was rewritten (or is gone) are dropped. The snapshot ("replace") lists every live file in one
// merged manifest per spec and content, so it also rewrites the manifests.
//
// Invariants enforced here:
//   - the rows do not change: the new files hold exactly the live rows of the files they replace,
//     read with every delete of the snapshot applied;
//   - the table keeps its position: binberg's summary properties of the parent are carried
//     forward (carried_summary), so a restart resumes where the table stands;
//   - safe beside a writer: the new files take the data sequence number of the snapshot the
//     rewrite read, so equality deletes committed meanwhile still apply to them; on a catalog
//     conflict the commit is rebuilt on the new snapshot, with the position deletes committed
//     meanwhile against rewritten files moved onto the rows' new places. A history that no longer
//     contains the snapshot read, or a rewritten file removed by someone else, starts the rewrite
//     over; max_attempts bounds all of it. Nothing a writer committed is ever dropped.

#include <cstdint>
#include <optional>
#include <string>

#include "iceberg/catalog.h"
#include "iceberg/detail/data_file_writer.h"

namespace binberg::iceberg {

struct CompactionOptions {
  // Output files aim at this size; data files below three quarters of it count as small.
  std::int64_t target_file_size_bytes = 128LL << 20;
  // A partition no delete applies to is rewritten once it holds this many small files.
  std::size_t min_input_files = 2;
  std::int64_t max_rows_per_file = 1'000'000;
  DataFileOptions files;
  std::string writer_id = "binberg-maintenance";
  // Commit attempts while writers commit to the table meanwhile.
  int max_attempts = 10;
};

struct CompactionResult {
  std::optional<std::int64_t> snapshot_id;  // nullopt: nothing to do, nothing committed
  std::int64_t rewritten_data_files = 0;
  std::int64_t added_data_files = 0;
  std::int64_t removed_delete_files = 0;
  std::int64_t rows_written = 0;
  std::int64_t rows_dropped = 0;  // deleted rows the rewritten files no longer hold
  std::int64_t bytes_written = 0;
  std::int64_t manifests_before = 0, manifests_after = 0;
  // Position deletes that writers committed during the rewrite, moved onto the new files.
  std::int64_t rebased_deletes = 0;
  int attempts = 0;
};

// Compacts table ID. Throws Error when it cannot (unreadable files, or max_attempts conflicts).
CompactionResult compact_table(Catalog& catalog, const TableIdentifier& id, const CompactionOptions& options = {});

// Only merges the current snapshot's manifests (one per spec and content); no data file changes.
CompactionResult rewrite_manifests(Catalog& catalog, const TableIdentifier& id, const CompactionOptions& options = {});

}  // namespace binberg::iceberg
