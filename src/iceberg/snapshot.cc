#include "iceberg/detail/snapshot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "core/error.h"

namespace binberg::iceberg {
namespace {

constexpr std::array<std::pair<SnapshotOperation, const char*>, 4> kOperations{{
    {SnapshotOperation::kAppend, "append"},
    {SnapshotOperation::kReplace, "replace"},
    {SnapshotOperation::kOverwrite, "overwrite"},
    {SnapshotOperation::kDelete, "delete"},
}};

constexpr std::array<std::string_view, 7> kSnapshotMembers{
    "snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms", "manifest-list", "summary", "schema-id"};

SnapshotOperation parse_operation(const std::string& text, const std::string& what) {
  for (const auto& [operation, name] : kOperations) {
    if (text == name) return operation;
  }
  fail("{}: unknown operation \"{}\" (expected append, replace, overwrite or delete)", what, text);
}

}  // namespace

const char* operation_name(SnapshotOperation operation) {
  for (const auto& [candidate, name] : kOperations) {
    if (candidate == operation) return name;
  }
  return "unknown";
}

Json snapshot_to_json(const Snapshot& snapshot) {
  if (snapshot.summary.contains("operation")) {
    fail("snapshot {}: the summary map must not hold \"operation\"; set Snapshot::operation", snapshot.snapshot_id);
  }
  Json json{{"snapshot-id", snapshot.snapshot_id}};
  if (snapshot.parent_snapshot_id) json["parent-snapshot-id"] = *snapshot.parent_snapshot_id;
  json["sequence-number"] = snapshot.sequence_number;
  json["timestamp-ms"] = snapshot.timestamp_ms;
  json["manifest-list"] = snapshot.manifest_list;
  Json summary{{"operation", operation_name(snapshot.operation)}};
  for (const auto& [key, value] : snapshot.summary) summary[key] = value;
  json["summary"] = std::move(summary);
  if (snapshot.schema_id) json["schema-id"] = *snapshot.schema_id;
  for (const auto& [key, value] : snapshot.extra_fields.items()) json[key] = value;
  return json;
}

Snapshot snapshot_from_json(const Json& json) {
  Snapshot snapshot;
  snapshot.snapshot_id = long_member(json, "snapshot-id", "snapshot");
  const std::string what = fmt::format("snapshot {}", snapshot.snapshot_id);
  snapshot.parent_snapshot_id = optional_long_member(json, "parent-snapshot-id", what);
  snapshot.sequence_number = long_member(json, "sequence-number", what);
  snapshot.timestamp_ms = long_member(json, "timestamp-ms", what);
  snapshot.manifest_list = string_member(json, "manifest-list", what);
  snapshot.summary = as_string_map(required_member(json, "summary", what), what + " summary");
  const auto operation = snapshot.summary.extract("operation");
  if (operation.empty()) fail("{} summary is missing required field \"operation\"", what);
  snapshot.operation = parse_operation(operation.mapped(), what);
  snapshot.schema_id = optional_int_member(json, "schema-id", what);
  for (const auto& [key, value] : json.items()) {
    if (std::find(kSnapshotMembers.begin(), kSnapshotMembers.end(), key) == kSnapshotMembers.end()) {
      snapshot.extra_fields[key] = value;
    }
  }
  return snapshot;
}

Json snapshot_ref_to_json(const SnapshotRef& ref) {
  Json json{{"snapshot-id", ref.snapshot_id}, {"type", ref.type == RefType::kBranch ? "branch" : "tag"}};
  if (ref.min_snapshots_to_keep) json["min-snapshots-to-keep"] = *ref.min_snapshots_to_keep;
  if (ref.max_snapshot_age_ms) json["max-snapshot-age-ms"] = *ref.max_snapshot_age_ms;
  if (ref.max_ref_age_ms) json["max-ref-age-ms"] = *ref.max_ref_age_ms;
  return json;
}

SnapshotRef snapshot_ref_from_json(const Json& json, const std::string& name) {
  const std::string what = fmt::format("ref \"{}\"", name);
  SnapshotRef ref;
  ref.snapshot_id = long_member(json, "snapshot-id", what);
  const std::string type = string_member(json, "type", what);
  if (type != "branch" && type != "tag") fail("{}: type must be \"branch\" or \"tag\", got \"{}\"", what, type);
  ref.type = type == "branch" ? RefType::kBranch : RefType::kTag;
  ref.min_snapshots_to_keep = optional_int_member(json, "min-snapshots-to-keep", what);
  ref.max_snapshot_age_ms = optional_long_member(json, "max-snapshot-age-ms", what);
  ref.max_ref_age_ms = optional_long_member(json, "max-ref-age-ms", what);
  if (ref.type == RefType::kTag && (ref.min_snapshots_to_keep || ref.max_snapshot_age_ms)) {
    fail("{}: min-snapshots-to-keep and max-snapshot-age-ms apply to branches only", what);
  }
  return ref;
}

Json snapshot_log_entry_to_json(const SnapshotLogEntry& entry) {
  return Json{{"timestamp-ms", entry.timestamp_ms}, {"snapshot-id", entry.snapshot_id}};
}

SnapshotLogEntry snapshot_log_entry_from_json(const Json& json) {
  return {long_member(json, "timestamp-ms", "snapshot-log entry"),
          long_member(json, "snapshot-id", "snapshot-log entry")};
}

Json metadata_log_entry_to_json(const MetadataLogEntry& entry) {
  return Json{{"timestamp-ms", entry.timestamp_ms}, {"metadata-file", entry.metadata_file}};
}

MetadataLogEntry metadata_log_entry_from_json(const Json& json) {
  return {long_member(json, "timestamp-ms", "metadata-log entry"),
          string_member(json, "metadata-file", "metadata-log entry")};
}

}  // namespace binberg::iceberg
