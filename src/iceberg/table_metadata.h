#pragma once

// Iceberg table metadata, format version 2 (spec "Table Metadata"; JSON form in Appendix C), and
// the changes a writer makes to it. The members are plain data; validate() checks every invariant
// the spec states, and runs on every parse, every serialization and after every change below.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "iceberg/detail/json_fields.h"
#include "iceberg/detail/snapshot.h"
#include "iceberg/detail/uuid.h"
#include "iceberg/partition_spec.h"
#include "iceberg/schema.h"
#include "iceberg/sort_order.h"

namespace binberg::iceberg {

inline constexpr int kFormatVersion = 2;
inline constexpr const char* kMainBranch = "main";
// Table property bounding the metadata-log, and its default (as in the reference implementation).
inline constexpr const char* kPreviousVersionsMaxProperty = "write.metadata.previous-versions-max";
inline constexpr std::size_t kDefaultPreviousVersionsMax = 100;

struct TableMetadata {
  Uuid table_uuid;
  std::string location;
  std::int64_t last_sequence_number = 0;
  std::int64_t last_updated_ms = 0;
  std::int32_t last_column_id = 0;
  std::vector<Schema> schemas;
  std::int32_t current_schema_id = 0;
  std::vector<PartitionSpec> partition_specs;
  std::int32_t default_spec_id = 0;
  std::int32_t last_partition_id = kFirstPartitionFieldId - 1;
  std::map<std::string, std::string> properties;
  std::optional<std::int64_t> current_snapshot_id;
  std::vector<Snapshot> snapshots;
  std::vector<SnapshotLogEntry> snapshot_log;
  std::vector<MetadataLogEntry> metadata_log;
  std::vector<SortOrder> sort_orders;
  std::int32_t default_sort_order_id = 0;
  std::map<std::string, SnapshotRef> refs;
  // Top-level members this code does not model ("statistics", ...), kept verbatim.
  Json extra_fields = Json::object();

  // A new table with a random table-uuid, no snapshots, and SCHEMA, SPEC and SORT_ORDER as the
  // current ones, their ids as given.
  static TableMetadata create(std::string location, const Schema& schema, const PartitionSpec& spec,
                              const SortOrder& sort_order, std::map<std::string, std::string> properties,
                              std::int64_t now_ms);

  // Throws Error naming the first broken invariant.
  void validate() const;

  // Lookups return null when absent; the current/default ones exist in valid metadata.
  const Schema* find_schema(std::int32_t schema_id) const;
  const PartitionSpec* find_partition_spec(std::int32_t spec_id) const;
  const SortOrder* find_sort_order(std::int32_t order_id) const;
  const Snapshot* find_snapshot(std::int64_t snapshot_id) const;
  const Schema& current_schema() const;
  const PartitionSpec& default_spec() const;
  const SortOrder& default_sort_order() const;
  const Snapshot* current_snapshot() const;

  std::int64_t next_sequence_number() const { return last_sequence_number + 1; }
  // A random positive id no snapshot of this table has.
  std::int64_t new_snapshot_id() const;

  // Commits SNAPSHOT to the main branch: its id must be new and positive, its sequence number above
  // last-sequence-number, its parent the current snapshot, and the default spec free of unknown
  // transforms. An unset schema-id becomes the current schema's. Updates last-sequence-number,
  // current-snapshot-id, the main ref, the snapshot-log and last-updated-ms.
  void add_snapshot(Snapshot snapshot);
  // Adds SCHEMA (its own id ignored) after validate_schema_evolution against the current schema,
  // and returns the id it got: one above the highest schema id, or the id of an existing schema
  // with the same structure. Raises last-column-id to cover its fields. Does not make it current.
  std::int32_t add_schema(const Schema& schema);
  void set_current_schema(std::int32_t schema_id);
  // Removes the snapshots SNAPSHOT_IDS (snapshot expiry) and their snapshot-log entries. Refuses
  // the current snapshot and any a ref points to. A kept snapshot's parent may be removed: the
  // spec allows a parent-snapshot-id that is no longer among the snapshots.
  void remove_snapshots(const std::set<std::int64_t>& snapshot_ids);
  // Appends the metadata file this metadata replaces (with its last-updated-ms) to the
  // metadata-log, dropping the oldest entries beyond write.metadata.previous-versions-max.
  void record_previous_metadata_file(std::string metadata_file, std::int64_t timestamp_ms);
};

// Validates, then serializes with the members in the spec's order.
Json table_metadata_to_json(const TableMetadata& metadata);
// Accepts only format-version 2. Also accepts a current-snapshot-id of -1 or null for "none",
// and derives the main branch from current-snapshot-id when "refs" is missing.
TableMetadata table_metadata_from_json(const Json& json);

std::string table_metadata_to_string(const TableMetadata& metadata);
TableMetadata table_metadata_from_string(std::string_view text);

}  // namespace binberg::iceberg
