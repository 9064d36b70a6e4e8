#pragma once

// What a table's snapshots reference, and how a maintenance operation publishes a new snapshot.
// Shared by compaction, snapshot expiry and orphan-file removal (maintenance.h).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "iceberg/catalog.h"
#include "iceberg/manifest.h"
#include "iceberg/table_metadata.h"

namespace binberg::iceberg {

// A live (ADDED or EXISTING) entry of a snapshot, sequence numbers resolved, with its manifest's
// partition spec.
struct SnapshotEntry {
  ManifestEntry entry;
  std::int32_t spec_id = 0;
};

// The live entries of SNAPSHOT: its data and delete files. Throws Error for an entry without a
// data sequence number (which no reader could place).
std::vector<SnapshotEntry> live_entries(const Snapshot& snapshot);

// Which entries of a manifest name files a snapshot needs.
enum class EntryFilter { kAll, kLive };

// Every file SNAPSHOTS reference: their manifest lists, those lists' manifests, and the files
// those manifests name — all entries, or only the live ones (a DELETED entry records a removal,
// it does not keep the file). Locations as the metadata records them.
std::set<std::string> files_of_snapshots(const std::vector<const Snapshot*>& snapshots, EntryFilter filter);

// Writes ENTRIES (new ones ADDED with SNAPSHOT_ID, kept ones EXISTING, removed ones DELETED) as
// one manifest per partition spec and content, under METADATA's location, named after PREFIX.
std::vector<ManifestFile> write_merged_manifests(const TableMetadata& metadata, const std::string& prefix,
                                                 std::int64_t snapshot_id, const std::vector<SnapshotEntry>& entries);

// The summary's total-* properties for the live ENTRIES of a snapshot.
std::map<std::string, std::string> snapshot_totals(const std::vector<SnapshotEntry>& entries);

// The parent's summary properties that describe the table rather than the commit — binberg's
// source position and the like ("binberg.*" except the writer and commit ids) — which a snapshot
// that changes no rows must carry forward, or a restart would read the table as never written.
std::map<std::string, std::string> carried_summary(const Snapshot* parent);

// Records BASE's metadata file in NEXT's metadata-log and writes NEXT as the version after BASE's;
// returns the new file's location. Nothing refers to it until a catalog commit does.
std::string write_next_metadata_file(const LoadedTable& base, TableMetadata& next);

// CATALOG.commit(COMMITS), recognizing a commit that landed although an error was raised (a lost
// reply): then every table points at its new metadata and this returns normally, since the
// catalog commits all or none. Otherwise the error propagates (CatalogUnavailable at once: the
// catalog already settles a lost answer whenever its database answers).
void commit_or_recognize(Catalog& catalog, const std::vector<TableCommit>& commits);

// write_next_metadata_file, then the catalog's compare-and-swap from BASE to it. CommitConflict
// when the table moved on meanwhile.
LoadedTable publish(Catalog& catalog, const LoadedTable& base, TableMetadata next);

// "<location>/<relative>", with one slash between.
std::string join_location(const std::string& location, const std::string& relative);

// The result types of SPEC's fields over SCHEMA.
std::vector<TypePtr> partition_types(const PartitionSpec& spec, const Schema& schema);
// A partition tuple as a map key, equal for equal tuples.
std::string partition_key(const std::vector<TypePtr>& types, const std::vector<Literal>& values);
// Where data files of PARTITION go: <location>/data/<field>=<value>/.../ (ends with '/').
std::string data_directory(const TableMetadata& metadata, const PartitionSpec& spec,
                           const std::vector<Literal>& partition);

}  // namespace binberg::iceberg
