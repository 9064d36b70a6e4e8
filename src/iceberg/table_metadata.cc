#include "iceberg/table_metadata.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <set>
#include <utility>

#include "core/error.h"
#include "iceberg/schema_evolution.h"

namespace binberg::iceberg {
namespace {

// Members table_metadata_from_json reads. The v1 "schema" and "partition-spec" are listed too: v2
// writers omit them, and keeping a stale copy next to "schemas" would mislead readers.
constexpr std::array<std::string_view, 21> kModeledMembers{"format-version",
                                                           "table-uuid",
                                                           "location",
                                                           "last-sequence-number",
                                                           "last-updated-ms",
                                                           "last-column-id",
                                                           "schemas",
                                                           "current-schema-id",
                                                           "partition-specs",
                                                           "default-spec-id",
                                                           "last-partition-id",
                                                           "properties",
                                                           "current-snapshot-id",
                                                           "snapshots",
                                                           "snapshot-log",
                                                           "metadata-log",
                                                           "sort-orders",
                                                           "default-sort-order-id",
                                                           "refs",
                                                           "schema",
                                                           "partition-spec"};

// Java writes -1 for "no current snapshot" in v1/v2 tables (spec Appendix F); so do we.
constexpr std::int64_t kNoSnapshotId = -1;

template <typename Item, typename Id>
const Item* find_by_id(const std::vector<Item>& items, Id id, Id (Item::*id_of)() const) {
  const auto it = std::find_if(items.begin(), items.end(), [&](const Item& item) { return (item.*id_of)() == id; });
  return it == items.end() ? nullptr : &*it;
}

template <typename Item, typename Id>
void require_unique_ids(const std::vector<Item>& items, Id (Item::*id_of)() const, std::string_view what) {
  std::set<Id> ids;
  for (const auto& item : items) {
    if (!ids.insert((item.*id_of)()).second) fail("{} id {} is used twice", what, (item.*id_of)());
  }
}

template <typename Item, typename Id>
std::string list_ids(const std::vector<Item>& items, Id (Item::*id_of)() const) {
  std::vector<Id> ids;
  for (const auto& item : items) ids.push_back((item.*id_of)());
  return fmt::format("{}", fmt::join(ids, ", "));
}

void validate_schemas(const TableMetadata& metadata) {
  if (metadata.schemas.empty()) fail("table metadata has no schemas");
  require_unique_ids(metadata.schemas, &Schema::schema_id, "schema");
  if (metadata.find_schema(metadata.current_schema_id) == nullptr) {
    fail("current-schema-id {} is not among the schemas ({})", metadata.current_schema_id,
         list_ids(metadata.schemas, &Schema::schema_id));
  }
  for (const auto& schema : metadata.schemas) {
    if (schema.highest_field_id() > metadata.last_column_id) {
      fail("schema {} has field id {} above last-column-id {}", schema.schema_id(), schema.highest_field_id(),
           metadata.last_column_id);
    }
  }
}

void validate_partition_specs(const TableMetadata& metadata) {
  if (metadata.partition_specs.empty()) fail("table metadata has no partition specs");
  require_unique_ids(metadata.partition_specs, &PartitionSpec::spec_id, "partition spec");
  if (metadata.find_partition_spec(metadata.default_spec_id) == nullptr) {
    fail("default-spec-id {} is not among the partition specs ({})", metadata.default_spec_id,
         list_ids(metadata.partition_specs, &PartitionSpec::spec_id));
  }
  // In v2 a partition field id names one field across all specs (spec "Partitioning").
  std::map<std::int32_t, const PartitionField*> fields_by_id;
  for (const auto& spec : metadata.partition_specs) {
    for (const auto& field : spec.fields()) {
      if (field.field_id > metadata.last_partition_id) {
        fail("partition spec {} field id {} is above last-partition-id {}", spec.spec_id(), field.field_id,
             metadata.last_partition_id);
      }
      const auto [it, inserted] = fields_by_id.emplace(field.field_id, &field);
      if (!inserted && (it->second->source_id != field.source_id || it->second->transform != field.transform)) {
        fail("partition field id {} means different fields in different specs", field.field_id);
      }
    }
  }
  metadata.default_spec().validate_against(metadata.current_schema());
}

void validate_sort_orders(const TableMetadata& metadata) {
  if (metadata.sort_orders.empty()) fail("table metadata has no sort orders");
  require_unique_ids(metadata.sort_orders, &SortOrder::order_id, "sort order");
  if (metadata.find_sort_order(metadata.default_sort_order_id) == nullptr) {
    fail("default-sort-order-id {} is not among the sort orders ({})", metadata.default_sort_order_id,
         list_ids(metadata.sort_orders, &SortOrder::order_id));
  }
  metadata.default_sort_order().validate_against(metadata.current_schema());
}

void validate_snapshots(const TableMetadata& metadata) {
  std::set<std::int64_t> ids;
  for (const auto& snapshot : metadata.snapshots) {
    if (!ids.insert(snapshot.snapshot_id).second) fail("snapshot id {} is used twice", snapshot.snapshot_id);
    if (snapshot.sequence_number > metadata.last_sequence_number) {
      fail("snapshot {} has sequence number {} above last-sequence-number {}", snapshot.snapshot_id,
           snapshot.sequence_number, metadata.last_sequence_number);
    }
    if (snapshot.schema_id && metadata.find_schema(*snapshot.schema_id) == nullptr) {
      fail("snapshot {} references unknown schema id {}", snapshot.snapshot_id, *snapshot.schema_id);
    }
    if (snapshot.summary.contains("operation")) {
      fail("snapshot {}: the summary map must not hold \"operation\"; it is Snapshot::operation", snapshot.snapshot_id);
    }
    // A parent may have expired; when it is still listed, it must be older.
    const Snapshot* parent =
        snapshot.parent_snapshot_id ? metadata.find_snapshot(*snapshot.parent_snapshot_id) : nullptr;
    if (parent != nullptr && parent->sequence_number >= snapshot.sequence_number) {
      fail("snapshot {} has sequence number {}, not above its parent {}'s {}", snapshot.snapshot_id,
           snapshot.sequence_number, parent->snapshot_id, parent->sequence_number);
    }
  }
}

void validate_refs(const TableMetadata& metadata) {
  for (const auto& [name, ref] : metadata.refs) {
    if (metadata.find_snapshot(ref.snapshot_id) == nullptr) {
      fail("ref \"{}\" references unknown snapshot {}", name, ref.snapshot_id);
    }
  }
  const auto main = metadata.refs.find(kMainBranch);
  if (!metadata.current_snapshot_id) {
    if (main != metadata.refs.end()) {
      fail("the main branch references snapshot {} but there is no current-snapshot-id", main->second.snapshot_id);
    }
    return;
  }
  if (metadata.find_snapshot(*metadata.current_snapshot_id) == nullptr) {
    fail("current-snapshot-id {} is not among the snapshots", *metadata.current_snapshot_id);
  }
  if (main == metadata.refs.end() || main->second.type != RefType::kBranch ||
      main->second.snapshot_id != *metadata.current_snapshot_id) {
    fail("the main branch must reference current-snapshot-id {}", *metadata.current_snapshot_id);
  }
}

std::size_t previous_versions_max(const TableMetadata& metadata) {
  const auto it = metadata.properties.find(kPreviousVersionsMaxProperty);
  if (it == metadata.properties.end()) return kDefaultPreviousVersionsMax;
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
  if (error != std::errc() || end != it->second.data() + it->second.size() || value < 1) {
    fail("table property {} must be a positive integer, got \"{}\"", kPreviousVersionsMaxProperty, it->second);
  }
  return value;
}

enum class Presence { kRequired, kOptional };

template <typename Item, typename Parse>
std::vector<Item> list_member(const Json& json, std::string_view key, Presence presence, Parse parse) {
  std::vector<Item> items;
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) {
    if (presence == Presence::kRequired) fail("table metadata is missing required field \"{}\"", key);
    return items;
  }
  if (!it->is_array()) fail("table metadata field \"{}\" must be a list, got {}", key, it->dump());
  for (const auto& item : *it) items.push_back(parse(item));
  return items;
}

template <typename Item, typename ToJson>
Json list_to_json(const std::vector<Item>& items, ToJson to_json_fn) {
  Json list = Json::array();
  for (const auto& item : items) list.push_back(to_json_fn(item));
  return list;
}

}  // namespace

TableMetadata TableMetadata::create(std::string location, const Schema& schema, const PartitionSpec& spec,
                                    const SortOrder& sort_order, std::map<std::string, std::string> properties,
                                    std::int64_t now_ms) {
  while (location.size() > 1 && location.back() == '/') location.pop_back();
  TableMetadata metadata;
  metadata.table_uuid = Uuid::random();
  metadata.location = std::move(location);
  metadata.last_updated_ms = now_ms;
  metadata.last_column_id = schema.highest_field_id();
  metadata.schemas = {schema};
  metadata.current_schema_id = schema.schema_id();
  metadata.partition_specs = {spec};
  metadata.default_spec_id = spec.spec_id();
  metadata.last_partition_id = spec.last_assigned_field_id();
  metadata.properties = std::move(properties);
  metadata.sort_orders = {sort_order};
  metadata.default_sort_order_id = sort_order.order_id();
  metadata.validate();
  return metadata;
}

void TableMetadata::validate() const {
  if (location.empty()) fail("table metadata has an empty location");
  validate_schemas(*this);
  validate_partition_specs(*this);
  validate_sort_orders(*this);
  validate_snapshots(*this);
  validate_refs(*this);
  previous_versions_max(*this);
}

const Schema* TableMetadata::find_schema(std::int32_t schema_id) const {
  return find_by_id(schemas, schema_id, &Schema::schema_id);
}

const PartitionSpec* TableMetadata::find_partition_spec(std::int32_t spec_id) const {
  return find_by_id(partition_specs, spec_id, &PartitionSpec::spec_id);
}

const SortOrder* TableMetadata::find_sort_order(std::int32_t order_id) const {
  return find_by_id(sort_orders, order_id, &SortOrder::order_id);
}

const Snapshot* TableMetadata::find_snapshot(std::int64_t snapshot_id) const {
  const auto it = std::find_if(snapshots.begin(), snapshots.end(),
                               [&](const Snapshot& snapshot) { return snapshot.snapshot_id == snapshot_id; });
  return it == snapshots.end() ? nullptr : &*it;
}

const Schema& TableMetadata::current_schema() const {
  const Schema* schema = find_schema(current_schema_id);
  if (schema == nullptr) fail("current-schema-id {} is not among the schemas", current_schema_id);
  return *schema;
}

const PartitionSpec& TableMetadata::default_spec() const {
  const PartitionSpec* spec = find_partition_spec(default_spec_id);
  if (spec == nullptr) fail("default-spec-id {} is not among the partition specs", default_spec_id);
  return *spec;
}

const SortOrder& TableMetadata::default_sort_order() const {
  const SortOrder* order = find_sort_order(default_sort_order_id);
  if (order == nullptr) fail("default-sort-order-id {} is not among the sort orders", default_sort_order_id);
  return *order;
}

const Snapshot* TableMetadata::current_snapshot() const {
  return current_snapshot_id ? find_snapshot(*current_snapshot_id) : nullptr;
}

std::int64_t TableMetadata::new_snapshot_id() const {
  while (true) {
    const Uuid random = Uuid::random();
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < 8; ++i) bits = bits << 8 | (random.bytes[i] ^ random.bytes[i + 8]);
    const auto id =
        static_cast<std::int64_t>(bits & static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    if (id != 0 && find_snapshot(id) == nullptr) return id;
  }
}

void TableMetadata::add_snapshot(Snapshot snapshot) {
  const std::int64_t id = snapshot.snapshot_id;
  if (id <= 0) fail("cannot add snapshot {}: snapshot ids must be positive", id);
  if (find_snapshot(id) != nullptr) fail("cannot add snapshot {}: the table already has a snapshot with that id", id);
  if (snapshot.sequence_number <= last_sequence_number) {
    fail("cannot add snapshot {}: sequence number {} is not above last-sequence-number {}", id,
         snapshot.sequence_number, last_sequence_number);
  }
  if (snapshot.parent_snapshot_id != current_snapshot_id) {
    fail("cannot add snapshot {}: its parent {} is not the current snapshot {}", id,
         snapshot.parent_snapshot_id ? std::to_string(*snapshot.parent_snapshot_id) : "(none)",
         current_snapshot_id ? std::to_string(*current_snapshot_id) : "(none)");
  }
  if (default_spec().has_unknown_transform()) {
    fail("cannot add snapshot {}: partition spec {} has a transform this writer does not know", id, default_spec_id);
  }
  if (!snapshot.schema_id) snapshot.schema_id = current_schema_id;

  TableMetadata next = *this;
  next.last_sequence_number = snapshot.sequence_number;
  next.current_snapshot_id = id;
  next.last_updated_ms = std::max(last_updated_ms, snapshot.timestamp_ms);
  next.snapshot_log.push_back({snapshot.timestamp_ms, id});
  // Keep the main branch's retention settings; only its target moves.
  next.refs[kMainBranch].snapshot_id = id;
  next.refs[kMainBranch].type = RefType::kBranch;
  next.snapshots.push_back(std::move(snapshot));
  next.validate();
  *this = std::move(next);
}

std::int32_t TableMetadata::add_schema(const Schema& schema) {
  for (const auto& existing : schemas) {
    if (existing.same_structure(schema)) return existing.schema_id();
  }
  validate_schema_evolution(current_schema(), schema, last_column_id);
  std::int32_t highest_id = 0;
  for (const auto& existing : schemas) highest_id = std::max(highest_id, existing.schema_id());
  const std::int32_t schema_id = highest_id + 1;
  schemas.push_back(schema.with_schema_id(schema_id));
  last_column_id = std::max(last_column_id, schema.highest_field_id());
  return schema_id;
}

void TableMetadata::set_current_schema(std::int32_t schema_id) {
  if (find_schema(schema_id) == nullptr) {
    fail("cannot set current schema {}: not among the schemas ({})", schema_id, list_ids(schemas, &Schema::schema_id));
  }
  TableMetadata next = *this;
  next.current_schema_id = schema_id;
  next.validate();  // the default spec and sort order must still bind to the new schema
  *this = std::move(next);
}

void TableMetadata::remove_snapshots(const std::set<std::int64_t>& snapshot_ids) {
  for (const auto& [name, ref] : refs) {
    if (snapshot_ids.contains(ref.snapshot_id)) {
      fail("cannot remove snapshot {}: ref \"{}\" points to it", ref.snapshot_id, name);
    }
  }
  TableMetadata next = *this;
  std::erase_if(next.snapshots, [&](const Snapshot& s) { return snapshot_ids.contains(s.snapshot_id); });
  std::erase_if(next.snapshot_log, [&](const SnapshotLogEntry& e) { return snapshot_ids.contains(e.snapshot_id); });
  next.validate();
  *this = std::move(next);
}

void TableMetadata::record_previous_metadata_file(std::string metadata_file, std::int64_t timestamp_ms) {
  metadata_log.push_back({timestamp_ms, std::move(metadata_file)});
  const std::size_t max_entries = previous_versions_max(*this);
  if (metadata_log.size() > max_entries) {
    metadata_log.erase(metadata_log.begin(), metadata_log.end() - static_cast<std::ptrdiff_t>(max_entries));
  }
}

Json table_metadata_to_json(const TableMetadata& metadata) {
  metadata.validate();
  Json json{{"format-version", kFormatVersion},
            {"table-uuid", metadata.table_uuid.to_string()},
            {"location", metadata.location},
            {"last-sequence-number", metadata.last_sequence_number},
            {"last-updated-ms", metadata.last_updated_ms},
            {"last-column-id", metadata.last_column_id},
            {"current-schema-id", metadata.current_schema_id},
            {"schemas", list_to_json(metadata.schemas, schema_to_json)},
            {"default-spec-id", metadata.default_spec_id},
            {"partition-specs", list_to_json(metadata.partition_specs, partition_spec_to_json)},
            {"last-partition-id", metadata.last_partition_id},
            {"default-sort-order-id", metadata.default_sort_order_id},
            {"sort-orders", list_to_json(metadata.sort_orders, sort_order_to_json)},
            {"properties", to_json(metadata.properties)},
            {"current-snapshot-id", metadata.current_snapshot_id.value_or(kNoSnapshotId)}};
  Json refs = Json::object();
  for (const auto& [name, ref] : metadata.refs) refs[name] = snapshot_ref_to_json(ref);
  json["refs"] = std::move(refs);
  json["snapshots"] = list_to_json(metadata.snapshots, snapshot_to_json);
  json["snapshot-log"] = list_to_json(metadata.snapshot_log, snapshot_log_entry_to_json);
  json["metadata-log"] = list_to_json(metadata.metadata_log, metadata_log_entry_to_json);
  for (const auto& [key, value] : metadata.extra_fields.items()) json[key] = value;
  return json;
}

TableMetadata table_metadata_from_json(const Json& json) {
  constexpr std::string_view kWhat = "table metadata";
  const std::int32_t format_version = int_member(json, "format-version", kWhat);
  if (format_version != kFormatVersion) {
    fail("format-version {} is not supported; binberg reads and writes format-version {} only", format_version,
         kFormatVersion);
  }
  TableMetadata metadata;
  metadata.table_uuid = Uuid::parse(string_member(json, "table-uuid", kWhat));
  metadata.location = string_member(json, "location", kWhat);
  metadata.last_sequence_number = long_member(json, "last-sequence-number", kWhat);
  metadata.last_updated_ms = long_member(json, "last-updated-ms", kWhat);
  metadata.last_column_id = int_member(json, "last-column-id", kWhat);
  metadata.schemas = list_member<Schema>(json, "schemas", Presence::kRequired, schema_from_json);
  metadata.current_schema_id = int_member(json, "current-schema-id", kWhat);
  metadata.partition_specs =
      list_member<PartitionSpec>(json, "partition-specs", Presence::kRequired, partition_spec_from_json);
  metadata.default_spec_id = int_member(json, "default-spec-id", kWhat);
  metadata.last_partition_id = int_member(json, "last-partition-id", kWhat);
  if (const auto it = json.find("properties"); it != json.end() && !it->is_null()) {
    metadata.properties = as_string_map(*it, "table properties");
  }
  const auto current_snapshot_id = optional_long_member(json, "current-snapshot-id", kWhat);
  if (current_snapshot_id != kNoSnapshotId) metadata.current_snapshot_id = current_snapshot_id;
  metadata.snapshots = list_member<Snapshot>(json, "snapshots", Presence::kOptional, snapshot_from_json);
  metadata.snapshot_log =
      list_member<SnapshotLogEntry>(json, "snapshot-log", Presence::kOptional, snapshot_log_entry_from_json);
  metadata.metadata_log =
      list_member<MetadataLogEntry>(json, "metadata-log", Presence::kOptional, metadata_log_entry_from_json);
  metadata.sort_orders = list_member<SortOrder>(json, "sort-orders", Presence::kRequired, sort_order_from_json);
  metadata.default_sort_order_id = int_member(json, "default-sort-order-id", kWhat);
  if (const auto it = json.find("refs"); it != json.end() && !it->is_null()) {
    require_object(*it, "table metadata field \"refs\"");
    for (const auto& [name, ref] : it->items()) metadata.refs.emplace(name, snapshot_ref_from_json(ref, name));
  } else if (metadata.current_snapshot_id) {
    // "Always a main branch reference, even if refs is null" (spec "Table Metadata Fields").
    metadata.refs.emplace(kMainBranch, SnapshotRef{*metadata.current_snapshot_id, RefType::kBranch, {}, {}, {}});
  }
  for (const auto& [key, value] : json.items()) {
    if (std::find(kModeledMembers.begin(), kModeledMembers.end(), key) == kModeledMembers.end()) {
      metadata.extra_fields[key] = value;
    }
  }
  metadata.validate();
  return metadata;
}

std::string table_metadata_to_string(const TableMetadata& metadata) { return table_metadata_to_json(metadata).dump(); }

TableMetadata table_metadata_from_string(std::string_view text) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::parse_error& error) {
    fail("table metadata is not valid JSON: {}", error.what());
  }
  return table_metadata_from_json(json);
}

}  // namespace binberg::iceberg
