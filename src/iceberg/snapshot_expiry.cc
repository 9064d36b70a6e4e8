#include "iceberg/snapshot_expiry.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/failpoint.h"
#include "iceberg/detail/table_files.h"
#include "iceberg/metadata_file.h"

namespace binberg::iceberg {
namespace {

// Size and modification time (Unix ms) of a local file; nullopt when it is gone.
struct FileStat {
  std::int64_t size = 0;
  std::int64_t modified_ms = 0;
};
std::optional<FileStat> stat_file(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return FileStat{static_cast<std::int64_t>(info.st_size),
                  static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1000 + info.st_mtim.tv_nsec / 1'000'000};
}

std::string normal(const std::string& location) { return local_path(location).lexically_normal().string(); }

// Deletes LOCATION; a file already gone (an earlier run was interrupted) is not an error.
std::int64_t delete_file(const std::string& location) {
  const std::filesystem::path path = local_path(location);
  const auto stat = stat_file(path);
  std::error_code error;
  std::filesystem::remove(path, error);
  if (error) fail("cannot delete {}: {}", path.string(), error.message());
  return stat ? stat->size : 0;
}

}  // namespace

ExpireResult expire_snapshots(Catalog& catalog, const TableIdentifier& id, const ExpireOptions& options) {
  if (options.retain_last < 1) fail("expire_snapshots: retain_last must be at least 1 (the current snapshot)");
  if (options.max_attempts < 1) fail("expire_snapshots: max_attempts must be positive");
  ExpireResult result;
  for (result.attempts = 1;; ++result.attempts) {
    const LoadedTable table = catalog.load_table(id);
    const TableMetadata& metadata = table.metadata;
    std::set<std::int64_t> keep;
    for (const auto& [name, ref] : metadata.refs) keep.insert(ref.snapshot_id);
    std::size_t ancestors = 0;
    for (const Snapshot* s = metadata.current_snapshot(); s != nullptr && ancestors < options.retain_last;
         s = s->parent_snapshot_id ? metadata.find_snapshot(*s->parent_snapshot_id) : nullptr, ++ancestors) {
      keep.insert(s->snapshot_id);
    }
    std::set<std::int64_t> expired;
    std::vector<const Snapshot*> expired_snapshots, retained_snapshots;
    for (const Snapshot& snapshot : metadata.snapshots) {
      if (!keep.contains(snapshot.snapshot_id) && snapshot.timestamp_ms < options.older_than_ms) {
        expired.insert(snapshot.snapshot_id);
        expired_snapshots.push_back(&snapshot);
      } else {
        retained_snapshots.push_back(&snapshot);
      }
    }
    result.expired_snapshots.assign(expired.begin(), expired.end());
    if (expired.empty()) {
      spdlog::info("table {}: no snapshot to expire", id.to_string());
      return result;
    }
    // Files only expired snapshots need; paths compared in their local, normal form.
    std::set<std::string> still_needed;
    for (const std::string& file : files_of_snapshots(retained_snapshots, EntryFilter::kLive)) {
      still_needed.insert(normal(file));
    }
    result.deleted_files.clear();
    for (const std::string& file : files_of_snapshots(expired_snapshots, EntryFilter::kAll)) {
      if (!still_needed.contains(normal(file))) result.deleted_files.push_back(file);
    }
    if (options.dry_run) return result;

    TableMetadata next = metadata;
    next.remove_snapshots(expired);
    try {
      publish(catalog, table, std::move(next));
    } catch (const CommitConflict& conflict) {
      if (result.attempts >= options.max_attempts) {
        fail("table {}: snapshot expiry gave up after {} attempts: {}", id.to_string(), result.attempts,
             conflict.what());
      }
      spdlog::info("table {}: a writer committed during snapshot expiry; planning it again", id.to_string());
      continue;
    }
    // Committed: nothing the table reaches names these files any more. A crash from here on
    // leaves orphans, which remove_orphan_files deletes.
    failpoint::hit("iceberg.expire.before_delete_files");
    for (const std::string& file : result.deleted_files) result.deleted_bytes += delete_file(file);
    spdlog::info("table {}: expired {} snapshots, deleted {} files ({} bytes)", id.to_string(), expired.size(),
                 result.deleted_files.size(), result.deleted_bytes);
    return result;
  }
}

OrphanResult remove_orphan_files(Catalog& catalog, const TableIdentifier& id, const OrphanOptions& options) {
  const LoadedTable table = catalog.load_table(id);
  const TableMetadata& metadata = table.metadata;
  std::set<std::string> reachable{normal(table.metadata_location)};
  for (const MetadataLogEntry& entry : metadata.metadata_log) reachable.insert(normal(entry.metadata_file));
  std::vector<const Snapshot*> snapshots;
  for (const Snapshot& snapshot : metadata.snapshots) snapshots.push_back(&snapshot);
  for (const std::string& file : files_of_snapshots(snapshots, EntryFilter::kAll)) reachable.insert(normal(file));

  OrphanResult result;
  const std::filesystem::path root = local_path(metadata.location);
  for (const char* directory : {"data", "metadata"}) {
    const std::filesystem::path top = root / directory;
    std::error_code error;
    if (!std::filesystem::is_directory(top, error)) continue;
    for (auto it = std::filesystem::recursive_directory_iterator(top, error);
         !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
      if (!it->is_regular_file(error)) continue;
      const std::string path = it->path().lexically_normal().string();
      ++result.files_checked;
      // Kept: what the table reaches, what other tools keep beside it, and anything recent.
      if (reachable.contains(path) || it->path().filename() == "version-hint.text") continue;
      const auto stat = stat_file(it->path());
      if (!stat || stat->modified_ms >= options.older_than_ms) continue;
      result.orphan_files.push_back(path);
      result.orphan_bytes += stat->size;
    }
    if (error) fail("table {}: cannot list {}: {}", id.to_string(), top.string(), error.message());
  }
  std::sort(result.orphan_files.begin(), result.orphan_files.end());
  if (!options.dry_run) {
    for (const std::string& file : result.orphan_files) delete_file(file);
  }
  spdlog::info("table {}: {} of {} files are orphans ({} bytes){}", id.to_string(), result.orphan_files.size(),
               result.files_checked, result.orphan_bytes, options.dry_run ? "; dry run, nothing deleted" : ", deleted");
  return result;
}

}  // namespace binberg::iceberg
