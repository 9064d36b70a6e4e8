#include "iceberg/table_scan.h"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "iceberg/detail/data_file_writer.h"
#include "iceberg/detail/primary_key_index.h"
#include "iceberg/manifest_list.h"
#include "iceberg/metadata_file.h"
#include "iceberg/parquet_file.h"

namespace binberg::iceberg {
namespace {

// A delete file's content, read once per scan.
struct PositionDeletes {
  std::int64_t sequence_number = 0;
  std::unordered_map<std::string, std::vector<std::int64_t>> positions_by_file;
};

struct EqualityDeletes {
  std::int64_t sequence_number = 0;
  Schema key_schema;
  std::vector<std::size_t> columns;  // of the key fields in the projection
  std::unordered_set<std::string> keys;
};

// Only the columns FIELD_IDS of SCHEMA, in that order.
Schema project(const Schema& schema, const std::vector<std::int32_t>& field_ids, const std::string& what) {
  std::vector<NestedField> fields;
  for (std::int32_t id : field_ids) {
    const NestedField* field = schema.find_field(id);
    if (field == nullptr) fail("{}: field id {} is not in the table schema", what, id);
    fields.push_back(*field);
  }
  return Schema(0, std::move(fields));
}

std::vector<Row> read_file_rows(const DataFile& file, const Schema& schema) {
  const std::vector<std::int32_t> ids = [&] {
    std::vector<std::int32_t> result;
    for (const auto& field : schema.fields()) result.push_back(field.id);
    return result;
  }();
  if (file.file_format != "PARQUET" && file.file_format != "parquet") {
    fail("{}: file format {} is not supported (only Parquet)", file.file_path, file.file_format);
  }
  const std::string path = local_path(file.file_path).string();
  std::vector<Row> rows = rows_from_arrow(schema, *read_parquet_columns(path, ids), file.file_path);
  if (static_cast<std::int64_t>(rows.size()) != file.record_count) {
    fail("{}: the manifest says {} records, the file holds {}", file.file_path, file.record_count, rows.size());
  }
  return rows;
}

}  // namespace

ScanPlan plan_scan(const TableMetadata& metadata, std::optional<std::int64_t> snapshot_id) {
  ScanPlan plan;
  const Snapshot* snapshot = snapshot_id ? metadata.find_snapshot(*snapshot_id) : metadata.current_snapshot();
  if (snapshot_id && snapshot == nullptr) fail("table {}: no snapshot {}", metadata.location, *snapshot_id);
  if (snapshot == nullptr) return plan;
  plan.snapshot_id = snapshot->snapshot_id;
  for (const ManifestFile& manifest : read_manifest_list(snapshot->manifest_list)) {
    for (ManifestEntry& entry : read_manifest(manifest)) {
      if (entry.status == ManifestEntryStatus::kDeleted) continue;
      if (!entry.sequence_number) {
        fail("manifest {}: entry {} has no data sequence number", manifest.manifest_path, entry.data_file.file_path);
      }
      LiveFile live{std::move(entry.data_file), *entry.sequence_number, manifest.partition_spec_id};
      const bool is_data = live.file.content == FileContent::kData;
      if (is_data != (manifest.content == ManifestContent::kData)) {
        fail("manifest {}: file {} has content {} in a {} manifest", manifest.manifest_path, live.file.file_path,
             static_cast<int>(live.file.content), is_data ? "delete" : "data");
      }
      (is_data ? plan.data_files : plan.delete_files).push_back(std::move(live));
    }
  }
  return plan;
}

void scan_rows(const ScanPlan& plan, const Schema& projection, const RowVisitor& visit) {
  std::vector<PositionDeletes> position_deletes;
  std::vector<EqualityDeletes> equality_deletes;
  for (const LiveFile& live : plan.delete_files) {
    if (live.file.content == FileContent::kPositionDeletes) {
      PositionDeletes deletes{live.data_sequence_number, {}};
      for (PositionDelete& row : read_position_deletes(live.file)) {
        deletes.positions_by_file[std::move(row.file_path)].push_back(row.pos);
      }
      position_deletes.push_back(std::move(deletes));
    } else {
      if (live.file.equality_ids.empty()) fail("{}: equality delete file without equality_ids", live.file.file_path);
      EqualityDeletes deletes{
          live.data_sequence_number, project(projection, live.file.equality_ids, live.file.file_path), {}, {}};
      for (std::int32_t id : live.file.equality_ids) {
        for (std::size_t c = 0; c < projection.fields().size(); ++c) {
          if (projection.fields()[c].id == id) deletes.columns.push_back(c);
        }
      }
      for (const Row& row : read_file_rows(live.file, deletes.key_schema)) {
        deletes.keys.insert(encode_key(deletes.key_schema, row));
      }
      equality_deletes.push_back(std::move(deletes));
    }
  }

  for (const LiveFile& live : plan.data_files) {
    std::vector<bool> deleted(static_cast<std::size_t>(live.file.record_count), false);
    for (const auto& deletes : position_deletes) {
      if (deletes.sequence_number < live.data_sequence_number) continue;
      auto it = deletes.positions_by_file.find(live.file.file_path);
      if (it == deletes.positions_by_file.end()) continue;
      for (std::int64_t pos : it->second) {
        if (pos < 0 || pos >= live.file.record_count) {
          fail("position delete of {} row {}: the file has {} rows", live.file.file_path, pos, live.file.record_count);
        }
        deleted[static_cast<std::size_t>(pos)] = true;
      }
    }
    std::vector<const EqualityDeletes*> applicable;
    for (const auto& deletes : equality_deletes) {
      if (deletes.sequence_number > live.data_sequence_number) applicable.push_back(&deletes);
    }
    const std::vector<Row> rows = read_file_rows(live.file, projection);
    for (std::size_t pos = 0; pos < rows.size(); ++pos) {
      if (deleted[pos]) continue;
      bool equality_deleted = false;
      for (const EqualityDeletes* deletes : applicable) {
        Row key;
        for (std::size_t c : deletes->columns) key.push_back(rows[pos][c]);
        if (deletes->keys.contains(encode_key(deletes->key_schema, key))) {
          equality_deleted = true;
          break;
        }
      }
      if (!equality_deleted) visit(rows[pos], live, static_cast<std::int64_t>(pos));
    }
  }
}

std::vector<PositionDelete> read_position_deletes(const DataFile& file) {
  std::vector<PositionDelete> deletes;
  for (Row& row : read_file_rows(file, position_delete_schema())) {
    deletes.push_back(PositionDelete{std::move(std::get<std::string>(row[0])), std::get<std::int64_t>(row[1])});
  }
  return deletes;
}

std::vector<Row> read_table_rows(const TableMetadata& metadata) {
  std::vector<Row> rows;
  scan_rows(plan_scan(metadata), metadata.current_schema(),
            [&](const Row& row, const LiveFile&, std::int64_t) { rows.push_back(row); });
  return rows;
}

}  // namespace binberg::iceberg
