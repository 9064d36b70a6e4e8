#include "iceberg/table_writer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "core/failpoint.h"
#include "iceberg/detail/primary_key_scan.h"
#include "iceberg/detail/snapshot_builder.h"
#include "iceberg/detail/table_files.h"
#include "iceberg/detail/uuid.h"
#include "iceberg/table_scan.h"

namespace binberg::iceberg {
namespace {

// A buffered row's memory, roughly: the literals and what strings and bytes hold outside them.
std::size_t approximate_size(const Row& row) {
  std::size_t size = sizeof(Row) + row.capacity() * sizeof(Literal);
  for (const Literal& literal : row) {
    if (const auto* text = std::get_if<std::string>(&literal)) {
      size += text->capacity();
    } else if (const auto* bytes = std::get_if<Bytes>(&literal)) {
      size += bytes->capacity();
    }
  }
  return size;
}

}  // namespace

TableWriter::TableWriter(LoadedTable table, WriteMode mode, TableWriterOptions options)
    : table_(std::move(table)), mode_(mode), options_(std::move(options)) {
  if (options_.max_rows_per_file < 1) fail("table {}: max_rows_per_file must be positive", table_.id.to_string());
  if (mode_ == WriteMode::kUpsert) rebuild_index();
}

void TableWriter::locate_key_columns() {
  const Schema& schema = table_.metadata.current_schema();
  const auto& ids = schema.identifier_field_ids();
  if (ids.empty()) {
    fail("table {}: upserts need identifier fields (the primary key); this table has none", table_.id.to_string());
  }
  std::vector<NestedField> key_fields;
  key_columns_.clear();
  for (std::int32_t id : ids) {
    for (std::size_t c = 0; c < schema.fields().size(); ++c) {
      if (schema.fields()[c].id == id) {
        key_columns_.push_back(c);
        key_fields.push_back(schema.fields()[c]);
      }
    }
  }
  if (key_fields.size() != ids.size()) {
    fail("table {}: identifier fields must be top-level columns", table_.id.to_string());
  }
  key_schema_.emplace(0, std::move(key_fields));
}

void TableWriter::evolve_schema(const Schema& schema, const std::map<std::string, std::string>& properties) {
  check_usable();
  if (!pending_rows_.empty() || !deleted_committed_.empty() || !written_files_.empty() || !deleted_written_.empty() ||
      !unlocated_.empty()) {
    fail("table {}: the schema can only change between commits", table_.id.to_string());
  }
  TableMetadata next = table_.metadata;
  const Schema& current = next.current_schema();
  if (mode_ == WriteMode::kUpsert) {
    // The index holds encoded keys: the key's fields and types must stay as they are.
    const auto key_types = [](const Schema& s) {
      std::vector<std::string> types;
      for (std::int32_t id : s.identifier_field_ids()) types.push_back(s.find_field(id)->type->to_string());
      return types;
    };
    if (schema.identifier_field_ids() != current.identifier_field_ids() || key_types(schema) != key_types(current)) {
      fail("table {}: a schema change may not change the identifier fields", table_.id.to_string());
    }
  }
  next.set_current_schema(next.add_schema(schema));
  for (const auto& [key, value] : properties) next.properties[key] = value;
  table_.metadata = std::move(next);
  if (mode_ == WriteMode::kUpsert) locate_key_columns();
}

void TableWriter::bound_index() {
  if (key_scan_ || index_.memory_bytes() <= options_.max_index_bytes) return;
  spdlog::info(
      "table {}: the primary-key index outgrew {} MiB at {} keys; changed keys are located at each commit from now on",
      table_.id.to_string(), options_.max_index_bytes >> 20, index_.size());
  key_scan_ = true;
  index_ = PrimaryKeyIndex();
}

void TableWriter::locate_changed_keys() {
  if (unlocated_.empty()) return;
  const ScanPlan candidates = plan_key_scan(table_.metadata, *key_schema_, unlocated_);
  files_scanned_for_keys_ += static_cast<std::int64_t>(candidates.data_files.size());
  locate_keys(candidates, *key_schema_, unlocated_, index_, deleted_committed_);
  for (const std::string& key : unlocated_removes_) {
    if (!deleted_committed_.contains(key)) ++absent_key_deletes_;
  }
  unlocated_.clear();
  unlocated_removes_.clear();
}

void TableWriter::rebuild_index() {
  locate_key_columns();
  index_ = index_primary_keys(table_, *key_schema_, options_.max_index_bytes);
  bound_index();
}

Row TableWriter::key_row(const Row& row) const {
  Row key;
  for (std::size_t c : key_columns_) {
    if (c >= row.size() || std::holds_alternative<std::monostate>(row[c])) {
      fail("table {}: a row without its primary key column {}", table_.id.to_string(),
           c < table_.metadata.current_schema().fields().size() ? table_.metadata.current_schema().fields()[c].name
                                                                : std::to_string(c));
    }
    key.push_back(row[c]);
  }
  return key;
}

void TableWriter::check_usable() const {
  if (poisoned_) fail("table {}: a commit failed; reopen the writer from the catalog", table_.id.to_string());
  if (prepared_) fail("table {}: a prepared commit is outstanding", table_.id.to_string());
}

TableWriter::OlderRow TableWriter::delete_older_row(const std::string& key, const Row& row) {
  if (auto it = pending_by_key_.find(key); it != pending_by_key_.end()) {
    std::optional<Row>& buffered = pending_rows_[it->second].row;
    buffered_bytes_ -= approximate_size(*buffered);
    buffered.reset();
    pending_by_key_.erase(it);
    return OlderRow::kDeleted;
  }
  if (auto it = written_by_key_.find(key); it != written_by_key_.end()) {
    deleted_written_.push_back(it->second);
    written_by_key_.erase(it);
    return OlderRow::kDeleted;
  }
  if (deleted_committed_.contains(key) || unlocated_.contains(key)) return OlderRow::kNone;
  if (key_scan_) {
    unlocated_.emplace(key, key_row(row));
    return OlderRow::kLocatedAtCommit;
  }
  const auto location = index_.find(key);
  if (!location) return OlderRow::kNone;
  deleted_committed_.emplace(key, *location);
  return OlderRow::kDeleted;
}

void TableWriter::buffer(PendingRow pending) {
  buffered_bytes_ += approximate_size(*pending.row);
  if (mode_ == WriteMode::kUpsert) pending_by_key_.emplace(pending.key, pending_rows_.size());
  pending_rows_.push_back(std::move(pending));
  if (buffered_bytes_ >= options_.max_buffered_bytes) {
    write_buffered_rows();
    ++spills_;
  }
}

void TableWriter::upsert(Row row) {
  check_usable();
  if (mode_ != WriteMode::kUpsert) fail("table {}: upsert on an append-only writer", table_.id.to_string());
  std::string key = encode_key(*key_schema_, key_row(row));
  ++pending_changes_;
  if (auto it = pending_by_key_.find(key); it != pending_by_key_.end()) {
    std::optional<Row>& buffered = pending_rows_[it->second].row;
    buffered_bytes_ = buffered_bytes_ - approximate_size(*buffered) + approximate_size(row);
    buffered = std::move(row);
    return;
  }
  delete_older_row(key, row);
  buffer(PendingRow{std::move(row), std::move(key)});
}

void TableWriter::remove(const Row& row) {
  check_usable();
  if (mode_ != WriteMode::kUpsert) fail("table {}: delete on an append-only writer", table_.id.to_string());
  std::string key = encode_key(*key_schema_, key_row(row));
  ++pending_changes_;
  // A key deleted by this batch before (and not written since) counts as found: it was there.
  switch (delete_older_row(key, row)) {
    case OlderRow::kDeleted:
      break;
    case OlderRow::kNone:
      if (unlocated_.contains(key)) {
        unlocated_removes_.push_back(std::move(key));  // absent if the commit does not find it
      } else if (!deleted_committed_.contains(key)) {
        ++absent_key_deletes_;
      }
      break;
    case OlderRow::kLocatedAtCommit:
      unlocated_removes_.push_back(std::move(key));
      break;
  }
}

void TableWriter::append(Row row) {
  check_usable();
  if (mode_ != WriteMode::kAppend) fail("table {}: append on an upsert writer", table_.id.to_string());
  ++pending_changes_;
  buffer(PendingRow{std::move(row), {}});
}

void TableWriter::write_buffered_rows() {
  const TableMetadata& base = table_.metadata;
  const Schema& schema = base.current_schema();
  const PartitionSpec& spec = base.default_spec();
  const std::vector<TypePtr> types = partition_types(spec, schema);
  const std::string file_prefix = Uuid::random().to_string();
  struct PartitionRows {
    std::vector<Literal> partition;
    std::vector<const PendingRow*> rows;
  };
  std::map<std::string, PartitionRows> by_partition;
  for (const PendingRow& pending : pending_rows_) {
    if (!pending.row) continue;
    const Row& row = *pending.row;
    std::vector<Literal> partition = spec.partition_values(schema, [&](std::int32_t source_id) -> Literal {
      for (std::size_t c = 0; c < schema.fields().size(); ++c) {
        if (schema.fields()[c].id == source_id) return row.at(c);
      }
      return std::monostate{};
    });
    auto& group = by_partition[partition_key(types, partition)];
    if (group.rows.empty()) group.partition = std::move(partition);
    group.rows.push_back(&pending);
  }
  int file_number = 0;
  for (auto& [key, group] : by_partition) {
    const std::string directory = data_directory(base, spec, group.partition);
    const auto per_file = static_cast<std::size_t>(options_.max_rows_per_file);
    for (std::size_t start = 0; start < group.rows.size(); start += per_file) {
      const std::size_t end = std::min(group.rows.size(), start + per_file);
      std::vector<const Row*> rows;
      rows.reserve(end - start);
      for (std::size_t i = start; i < end; ++i) rows.push_back(&*group.rows[i]->row);
      const std::string location = directory + fmt::format("{}-{:05}.parquet", file_prefix, file_number++);
      if (mode_ == WriteMode::kUpsert) {
        for (std::size_t i = start; i < end; ++i) {
          written_by_key_[group.rows[i]->key] = {written_files_.size(), static_cast<std::uint32_t>(i - start)};
        }
      }
      written_files_.push_back(write_data_file(location, schema, group.partition, rows, options_.files));
    }
  }
  pending_rows_.clear();
  pending_by_key_.clear();
  buffered_bytes_ = 0;
}

PreparedCommit TableWriter::prepare(const std::string& commit_id,
                                    const std::map<std::string, std::string>& summary_properties, std::int64_t now_ms) {
  check_usable();
  locate_changed_keys();
  write_buffered_rows();
  SnapshotBuilder snapshot(table_, options_);
  snapshot.add_data_files(written_files_);
  failpoint::hit("iceberg.writer.after_data_files");

  // The rows this batch replaces: committed ones (through the index) and ones of its own files
  // written early.
  for (const auto& [key, location] : deleted_committed_) {
    snapshot.delete_row(index_.file(location.file), location.position);
  }
  for (const auto& [file, position] : deleted_written_) snapshot.delete_row_of_added_file(file, position);
  snapshot.write_delete_files();
  failpoint::hit("iceberg.writer.after_delete_files");

  snapshot.write_manifests();
  failpoint::hit("iceberg.writer.after_manifests");

  PreparedCommit commit = snapshot.write_metadata_file(commit_id, summary_properties, now_ms);
  failpoint::hit("iceberg.writer.after_metadata_file");
  prepared_ = commit.new_metadata_location;
  return commit;
}

void TableWriter::committed(const PreparedCommit& commit) {
  if (!prepared_ || *prepared_ != commit.new_metadata_location) {
    fail("table {}: committed() for a commit this writer did not prepare", table_.id.to_string());
  }
  if (mode_ == WriteMode::kUpsert && key_scan_) {
    index_ = PrimaryKeyIndex();  // only this commit's located files were in it
  } else if (mode_ == WriteMode::kUpsert) {
    for (const auto& [key, location] : deleted_committed_) index_.erase(key);
    std::vector<std::uint32_t> ordinals;
    for (const DataFile& file : written_files_) {
      ordinals.push_back(
          index_.add_file(IndexedFile{file.file_path, table_.metadata.default_spec().spec_id(), file.partition}));
    }
    for (auto& [key, location] : written_by_key_) {
      index_.assign(key, PrimaryKeyIndex::Location{ordinals[location.first], location.second});
    }
  }
  if (mode_ == WriteMode::kUpsert) bound_index();
  table_ = LoadedTable{commit.id, commit.new_metadata_location, commit.metadata};
  pending_rows_.clear();
  pending_by_key_.clear();
  deleted_committed_.clear();
  written_files_.clear();
  written_by_key_.clear();
  deleted_written_.clear();
  pending_changes_ = 0;
  buffered_bytes_ = 0;
  prepared_.reset();
}

void commit_tables(Catalog& catalog, const std::vector<TableWriter*>& writers,
                   const std::vector<PreparedCommit>& commits) {
  if (writers.size() != commits.size())
    fail("commit_tables: {} writers for {} commits", writers.size(), commits.size());
  std::vector<TableCommit> swaps;
  for (const auto& commit : commits) {
    swaps.push_back(TableCommit{commit.id, commit.base_metadata_location, commit.new_metadata_location});
  }
  try {
    commit_or_recognize(catalog, swaps);
  } catch (const Error&) {
    for (TableWriter* writer : writers) writer->poison();
    throw;
  }
  for (std::size_t i = 0; i < writers.size(); ++i) writers[i]->committed(commits[i]);
}

}  // namespace binberg::iceberg
