#pragma once

// Snapshot expiry (expire_snapshots) and orphan-file removal: the two ways a table's directory
// stops growing without bound. Neither changes the current snapshot or any row.
//
// Invariants enforced here:
//   - the current snapshot, every snapshot a ref names and the retain_last newest ancestors of
//     the current one are never expired;
//   - a file is deleted only after the metadata that stops referring to it is committed, and
//     only when no retained snapshot refers to it (expiry) or nothing the table's metadata
//     reaches refers to it and it is older than the grace period (orphans) — files a writer has
//     written but not yet committed are younger than that, so a concurrent commit never loses
//     its files;
//   - a concurrent commit makes expiry's catalog swap fail: it is planned again on the new
//     metadata (max_attempts), never forced.

#include <cstdint>
#include <string>
#include <vector>

#include "iceberg/catalog.h"

namespace binberg::iceberg {

struct ExpireOptions {
  // Snapshots older than this (timestamp-ms) may expire.
  std::int64_t older_than_ms = 0;
  // Ancestors of the current snapshot kept whatever their age, the current one included.
  std::size_t retain_last = 1;
  bool dry_run = false;  // report what would expire and which files would go; change nothing
  int max_attempts = 10;
};

struct ExpireResult {
  std::vector<std::int64_t> expired_snapshots;
  std::vector<std::string> deleted_files;  // manifest lists, manifests, data and delete files
  std::int64_t deleted_bytes = 0;
  int attempts = 0;
};

ExpireResult expire_snapshots(Catalog& catalog, const TableIdentifier& id, const ExpireOptions& options);

struct OrphanOptions {
  // Files modified after this (Unix ms) are kept even if unreferenced: a writer may be about to
  // commit them. Default policy (the CLI's): three days before now.
  std::int64_t older_than_ms = 0;
  bool dry_run = false;
};

struct OrphanResult {
  std::vector<std::string> orphan_files;  // deleted, or to delete on a dry run
  std::int64_t orphan_bytes = 0;
  std::int64_t files_checked = 0;
};

// Removes the files under the table's data/ and metadata/ directories that nothing reachable from
// its current metadata names (metadata files in the metadata-log, manifest lists of every
// snapshot, their manifests and files). Only local tables.
OrphanResult remove_orphan_files(Catalog& catalog, const TableIdentifier& id, const OrphanOptions& options);

}  // namespace binberg::iceberg
