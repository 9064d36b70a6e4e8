#pragma once

// Snapshots, snapshot references and the snapshot/metadata logs of table metadata (spec
// "Snapshots", "Snapshot References", "Table Metadata Fields"; JSON form in Appendix C).

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "iceberg/detail/json_fields.h"

namespace binberg::iceberg {

// The summary's required "operation" (spec "Snapshots").
enum class SnapshotOperation { kAppend, kReplace, kOverwrite, kDelete };

struct Snapshot {
  std::int64_t snapshot_id = 0;
  std::optional<std::int64_t> parent_snapshot_id;
  std::int64_t sequence_number = 0;
  std::int64_t timestamp_ms = 0;
  std::string manifest_list;
  SnapshotOperation operation = SnapshotOperation::kAppend;
  // The other summary properties ("added-data-files", ...); never "operation".
  std::map<std::string, std::string> summary;
  std::optional<std::int32_t> schema_id;
  // Members this code does not model, kept so rewriting the metadata does not lose them.
  Json extra_fields = Json::object();

  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

enum class RefType { kBranch, kTag };

struct SnapshotRef {
  std::int64_t snapshot_id = 0;
  RefType type = RefType::kBranch;
  std::optional<std::int32_t> min_snapshots_to_keep;
  std::optional<std::int64_t> max_snapshot_age_ms;
  std::optional<std::int64_t> max_ref_age_ms;

  friend bool operator==(const SnapshotRef&, const SnapshotRef&) = default;
};

struct SnapshotLogEntry {
  std::int64_t timestamp_ms = 0;
  std::int64_t snapshot_id = 0;

  friend bool operator==(const SnapshotLogEntry&, const SnapshotLogEntry&) = default;
};

struct MetadataLogEntry {
  std::int64_t timestamp_ms = 0;
  std::string metadata_file;

  friend bool operator==(const MetadataLogEntry&, const MetadataLogEntry&) = default;
};

const char* operation_name(SnapshotOperation operation);

Json snapshot_to_json(const Snapshot& snapshot);
Snapshot snapshot_from_json(const Json& json);
Json snapshot_ref_to_json(const SnapshotRef& ref);
// NAME is the ref's key in "refs", for error messages.
SnapshotRef snapshot_ref_from_json(const Json& json, const std::string& name);
Json snapshot_log_entry_to_json(const SnapshotLogEntry& entry);
SnapshotLogEntry snapshot_log_entry_from_json(const Json& json);
Json metadata_log_entry_to_json(const MetadataLogEntry& entry);
MetadataLogEntry metadata_log_entry_from_json(const Json& json);

}  // namespace binberg::iceberg
