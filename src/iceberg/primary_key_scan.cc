#include "iceberg/detail/primary_key_scan.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "iceberg/single_value.h"

namespace binberg::iceberg {
namespace {

// Ends an index build early once the index outgrew its bound.
struct IndexOutgrown {};

void reject_equality_deletes(const LoadedTable& table, const ScanPlan& plan) {
  for (const LiveFile& file : plan.delete_files) {
    if (file.file.content == FileContent::kEqualityDeletes) {
      fail(
          "table {}: it has equality delete files ({}); binberg's upsert writer keeps tables free of them — "
          "compact the table first",
          table.id.to_string(), file.file.file_path);
    }
  }
}

// Whether data files can be skipped by their key bounds: the key is one int or long column.
bool prunable_by_bounds(const Schema& key_schema) {
  const std::string type = key_schema.fields().front().type->to_string();
  return key_schema.fields().size() == 1 && (type == "long" || type == "int");
}

// The values of the single integer column of KEYS, sorted.
std::vector<std::int64_t> sorted_integer_keys(const std::unordered_map<std::string, Row>& keys) {
  std::vector<std::int64_t> values;
  for (const auto& [encoded, key] : keys) {
    values.push_back(std::visit(
        [](const auto& v) -> std::int64_t {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::int32_t> ||
                        std::is_same_v<std::decay_t<decltype(v)>, std::int64_t>) {
            return v;
          } else {
            return 0;
          }
        },
        key.front()));
  }
  std::sort(values.begin(), values.end());
  return values;
}

// Whether FILE's bounds of the integer KEY_FIELD leave room for one of SORTED_KEYS; a file without
// bounds may hold any key.
bool may_hold_any(const DataFile& file, const NestedField& key_field, const std::vector<std::int64_t>& sorted_keys) {
  const auto lower = file.lower_bounds.find(key_field.id);
  const auto upper = file.upper_bounds.find(key_field.id);
  if (lower == file.lower_bounds.end() || upper == file.upper_bounds.end()) return true;
  const auto integer = [&](const Bytes& bytes) {
    const Literal value = from_single_value(*key_field.type, bytes, "key bound");
    return std::holds_alternative<std::int32_t>(value) ? std::get<std::int32_t>(value) : std::get<std::int64_t>(value);
  };
  const auto first = std::lower_bound(sorted_keys.begin(), sorted_keys.end(), integer(lower->second));
  return first != sorted_keys.end() && *first <= integer(upper->second);
}

}  // namespace

PrimaryKeyIndex index_primary_keys(const LoadedTable& table, const Schema& key_schema, std::size_t max_bytes) {
  PrimaryKeyIndex index;
  const ScanPlan plan = plan_scan(table.metadata);
  reject_equality_deletes(table, plan);
  const LiveFile* last_file = nullptr;
  std::uint32_t ordinal = 0;
  try {
    scan_rows(plan, key_schema, [&](const Row& key, const LiveFile& file, std::int64_t position) {
      if (&file != last_file) {
        ordinal = index.add_file(IndexedFile{file.file.file_path, file.spec_id, file.file.partition});
        last_file = &file;
      }
      if (position > std::numeric_limits<std::uint32_t>::max()) {
        fail("table {}: data file {} has more than 2^32 rows", table.id.to_string(), file.file.file_path);
      }
      const PrimaryKeyIndex::Location location{ordinal, static_cast<std::uint32_t>(position)};
      if ((index.size() & 0xffff) == 0 && index.memory_bytes() > max_bytes) throw IndexOutgrown{};
      if (!index.insert(encode_key(key_schema, key), location)) {
        fail(
            "table {}: a primary key is held twice (again in {} row {}); the table breaks the one-row-per-key "
            "invariant",
            table.id.to_string(), file.file.file_path, position);
      }
    });
  } catch (const IndexOutgrown&) {
  }
  return index;
}

ScanPlan plan_key_scan(const TableMetadata& metadata, const Schema& key_schema,
                       const std::unordered_map<std::string, Row>& keys) {
  const ScanPlan plan = plan_scan(metadata);
  ScanPlan candidates{plan.snapshot_id, {}, plan.delete_files};
  const bool prunable = prunable_by_bounds(key_schema);
  const std::vector<std::int64_t> sorted_keys = prunable ? sorted_integer_keys(keys) : std::vector<std::int64_t>{};
  for (const LiveFile& file : plan.data_files) {
    if (!prunable || may_hold_any(file.file, key_schema.fields().front(), sorted_keys)) {
      candidates.data_files.push_back(file);
    }
  }
  return candidates;
}

void locate_keys(const ScanPlan& plan, const Schema& key_schema, const std::unordered_map<std::string, Row>& keys,
                 PrimaryKeyIndex& index, std::unordered_map<std::string, PrimaryKeyIndex::Location>& found) {
  const LiveFile* last_file = nullptr;
  std::uint32_t ordinal = 0;
  scan_rows(plan, key_schema, [&](const Row& key, const LiveFile& file, std::int64_t position) {
    const std::string encoded = encode_key(key_schema, key);
    if (!keys.contains(encoded)) return;
    if (&file != last_file) {
      ordinal = index.add_file(IndexedFile{file.file.file_path, file.spec_id, file.file.partition});
      last_file = &file;
    }
    found.emplace(encoded, PrimaryKeyIndex::Location{ordinal, static_cast<std::uint32_t>(position)});
  });
}

}  // namespace binberg::iceberg
