#pragma once

// Iceberg v2 manifests (spec "Manifests"): Avro object container files of manifest_entry records,
// each describing one data or delete file, with the spec's field ids on every Avro field so any
// Iceberg reader (Java, pyiceberg) projects them by id.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "avro/schema.h"
#include "avro/value.h"
#include "iceberg/detail/literal.h"
#include "iceberg/partition_spec.h"
#include "iceberg/schema.h"

namespace binberg::iceberg {

enum class FileContent { kData = 0, kPositionDeletes = 1, kEqualityDeletes = 2 };
enum class ManifestContent { kData = 0, kDeletes = 1 };
enum class ManifestEntryStatus { kExisting = 0, kAdded = 1, kDeleted = 2 };

// The sequence number of a manifest (or entry) whose commit has not assigned one yet.
inline constexpr std::int64_t kUnassignedSequenceNumber = -1;

// The data_file struct (field 2 of manifest_entry).
struct DataFile {
  FileContent content = FileContent::kData;
  std::string file_path;
  std::string file_format = "PARQUET";
  std::vector<Literal> partition;  // one per partition field of the spec, in spec order
  std::int64_t record_count = 0;
  std::int64_t file_size_in_bytes = 0;
  // Empty maps and lists are written as null and read back empty.
  std::map<std::int32_t, std::int64_t> column_sizes, value_counts, null_value_counts, nan_value_counts;
  std::map<std::int32_t, Bytes> lower_bounds, upper_bounds;  // Appendix D single-value binary
  std::optional<Bytes> key_metadata;
  std::vector<std::int64_t> split_offsets;
  std::vector<std::int32_t> equality_ids;
  std::optional<std::int32_t> sort_order_id;
  friend bool operator==(const DataFile&, const DataFile&) = default;
};

struct ManifestEntry {
  ManifestEntryStatus status = ManifestEntryStatus::kAdded;
  std::optional<std::int64_t> snapshot_id;      // null = inherit from the manifest's added_snapshot_id
  std::optional<std::int64_t> sequence_number;  // null = inherit (ADDED entries only)
  std::optional<std::int64_t> file_sequence_number;
  DataFile data_file;
  friend bool operator==(const ManifestEntry&, const ManifestEntry&) = default;
};

struct PartitionFieldSummary {
  bool contains_null = false;
  std::optional<bool> contains_nan;
  std::optional<Bytes> lower_bound, upper_bound;  // Appendix D single-value binary
  friend bool operator==(const PartitionFieldSummary&, const PartitionFieldSummary&) = default;
};

// A manifest as the manifest list records it (spec "Manifest Lists", manifest_file).
struct ManifestFile {
  std::string manifest_path;
  std::int64_t manifest_length = 0;
  std::int32_t partition_spec_id = 0;
  ManifestContent content = ManifestContent::kData;
  std::int64_t sequence_number = kUnassignedSequenceNumber;
  std::int64_t min_sequence_number = kUnassignedSequenceNumber;
  std::int64_t added_snapshot_id = 0;
  std::int32_t added_files_count = 0, existing_files_count = 0, deleted_files_count = 0;
  std::int64_t added_rows_count = 0, existing_rows_count = 0, deleted_rows_count = 0;
  std::vector<PartitionFieldSummary> partitions;
  std::optional<Bytes> key_metadata;
  friend bool operator==(const ManifestFile&, const ManifestFile&) = default;
};

// Writes ENTRIES as one manifest at LOCATION (path or file:/ URI; the file must not exist) for a
// table whose schema and partition spec are given. Header metadata: schema (JSON), schema-id,
// partition-spec (JSON fields array), partition-spec-id, format-version "2", content
// "data"/"deletes". The file appears complete under LOCATION or not at all.
//
// Returns the manifest_file record for the manifest list: counts, partition summaries, length.
// sequence_number stays kUnassignedSequenceNumber (the commit assigns it); min_sequence_number is
// the least explicit data sequence number of the live (ADDED, EXISTING) entries, or
// kUnassignedSequenceNumber when none has one (all inherit: the commit's number is the minimum).
//
// Throws Error for entries the spec forbids: ADDED entries of another snapshot without sequence
// numbers, EXISTING entries without snapshot id or sequence numbers, partition tuples that do not
// fit the spec, files whose content does not match CONTENT.
ManifestFile write_manifest(const std::string& location, const Schema& schema, const PartitionSpec& spec,
                            ManifestContent content, std::int64_t snapshot_id,
                            const std::vector<ManifestEntry>& entries);

// Reads a manifest, resolving inheritance from MANIFEST: a null snapshot id is its
// added_snapshot_id; null sequence numbers of ADDED entries (of any entry when the manifest's
// sequence number is 0, a v1 manifest) are its sequence_number, unless that is unassigned.
// Accepts manifests of pyiceberg and Java (fields matched by field id, in any order, unknown
// fields ignored). Errors start with "iceberg manifest <location>: ".
std::vector<ManifestEntry> read_manifest(const ManifestFile& manifest);

// Helpers shared with the manifest list; not part of the table-format API.
namespace manifest_detail {

// Avro schema JSON pieces carrying Iceberg field ids: {"name", "type", "field-id"} and the
// optional form {"name", "type": ["null", T], "default": null, "field-id"}.
avro::Json required_field(std::string_view name, avro::Json type, std::int32_t field_id);
avro::Json optional_field(std::string_view name, avro::Json type, std::int32_t field_id);
avro::Json list_of(avro::Json items, std::int32_t element_id);

// A value of a container file read with the file's own schema: its schema node (unions already
// resolved to the written branch) and its path for error messages ("data_file.record_count").
struct Datum {
  const avro::Node* node = nullptr;
  const avro::Value* value = nullptr;
  std::string path;
};

// Resolves a union to its branch. Throws Error when the value does not fit the node.
Datum unwrap(Datum datum);
bool is_null(const Datum& datum);

// A record whose fields are found by Iceberg field id, or by NAME when the writer gave no ids.
class RecordView {
 public:
  explicit RecordView(Datum datum);
  // Nullopt when the field is absent or null.
  std::optional<Datum> find(std::int32_t field_id, std::string_view name) const;
  // Throws Error naming the field when it is absent or null.
  Datum get(std::int32_t field_id, std::string_view name) const;
  // True when the record has the field, null or not.
  bool has(std::int32_t field_id, std::string_view name) const;
  const std::string& path() const { return datum_.path; }

 private:
  const avro::Field* field(std::int32_t field_id, std::string_view name) const;

  Datum datum_;
};

// Reads the Avro container file LOCATION: BEGIN gets its header metadata, then READ each record in
// order. Errors start with WHAT and name the record: "<WHAT>: <ITEM> 3: ...".
using HeaderMetadata = std::map<std::string, std::string>;
void read_records(const std::string& location, const std::string& what, std::string_view item,
                  const std::function<void(const HeaderMetadata&)>& begin,
                  const std::function<void(const RecordView&)>& read);

// Typed reads; an int field written as long (or the reverse) is accepted when the value fits.
std::int32_t as_int(const Datum& datum);
std::int64_t as_long(const Datum& datum);
bool as_bool(const Datum& datum);
std::string as_string(const Datum& datum);
Bytes as_bytes(const Datum& datum);  // bytes or fixed
std::vector<Datum> as_array(const Datum& datum);

}  // namespace manifest_detail

}  // namespace binberg::iceberg
