#include "iceberg/manifest.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "avro/container.h"
#include "core/error.h"
#include "core/failpoint.h"
#include "iceberg/detail/durable_file.h"
#include "iceberg/detail/uuid.h"
#include "iceberg/metadata_file.h"
#include "iceberg/single_value.h"

namespace binberg::iceberg {

namespace manifest_detail {

avro::Json required_field(std::string_view name, avro::Json type, std::int32_t field_id) {
  return avro::Json{{"name", name}, {"type", std::move(type)}, {"field-id", field_id}};
}

avro::Json optional_field(std::string_view name, avro::Json type, std::int32_t field_id) {
  return avro::Json{{"name", name},
                    {"type", avro::Json::array({"null", std::move(type)})},
                    {"default", nullptr},
                    {"field-id", field_id}};
}

avro::Json list_of(avro::Json items, std::int32_t element_id) {
  return avro::Json{{"type", "array"}, {"items", std::move(items)}, {"element-id", element_id}};
}

Datum unwrap(Datum datum) {
  if (datum.node == nullptr || datum.value == nullptr) fail("{}: no value", datum.path);
  if (datum.node->type != avro::Type::kUnion) return datum;
  const auto* chosen = std::get_if<avro::Union>(&datum.value->data());
  if (chosen == nullptr || chosen->branch() >= datum.node->branches.size()) {
    fail("{}: not a value of {}", datum.path, datum.node->describe());
  }
  return unwrap(Datum{datum.node->branches[chosen->branch()], &chosen->value(), std::move(datum.path)});
}

bool is_null(const Datum& datum) { return unwrap(datum).node->type == avro::Type::kNull; }

RecordView::RecordView(Datum datum) : datum_(unwrap(std::move(datum))) {
  if (datum_.node->type != avro::Type::kRecord || !datum_.value->is<avro::Record>() ||
      datum_.value->as<avro::Record>().fields.size() != datum_.node->fields.size()) {
    fail("{}: expected a record, got {}", datum_.path, datum_.node->describe());
  }
}

bool RecordView::has(std::int32_t field_id, std::string_view name) const { return field(field_id, name) != nullptr; }

const avro::Field* RecordView::field(std::int32_t field_id, std::string_view name) const {
  const auto& fields = datum_.node->fields;
  const avro::Field* found = nullptr;
  for (const auto& field : fields) {
    const auto id = field.properties.find("field-id");
    if (id != field.properties.end() && id->is_number_integer() && id->get<std::int64_t>() == field_id) {
      found = &field;
      break;
    }
  }
  if (found == nullptr) {
    // Writers without ids: match by the spec's name, unless that field claims another id.
    for (const auto& field : fields) {
      if (!name.empty() && field.name == name && !field.properties.contains("field-id")) found = &field;
    }
  }
  return found;
}

std::optional<Datum> RecordView::find(std::int32_t field_id, std::string_view name) const {
  const avro::Field* found = field(field_id, name);
  if (found == nullptr) return std::nullopt;
  const std::string label = name.empty() ? found->name : std::string(name);
  const std::string path = datum_.path.empty() ? label : fmt::format("{}.{}", datum_.path, label);
  Datum datum = unwrap(Datum{found->type, &datum_.value->as<avro::Record>().fields[found->position], path});
  if (datum.node->type == avro::Type::kNull) return std::nullopt;
  return datum;
}

Datum RecordView::get(std::int32_t field_id, std::string_view name) const {
  auto datum = find(field_id, name);
  if (!datum) {
    fail("{}: required field {} (id {}) is missing or null",
         datum_.path.empty() ? std::string(name) : fmt::format("{}.{}", datum_.path, name), name, field_id);
  }
  return std::move(*datum);
}

std::int32_t as_int(const Datum& datum) {
  const Datum d = unwrap(datum);
  if (const auto* value = std::get_if<std::int32_t>(&d.value->data())) return *value;
  if (const auto* value = std::get_if<std::int64_t>(&d.value->data())) {
    if (*value < std::numeric_limits<std::int32_t>::min() || *value > std::numeric_limits<std::int32_t>::max()) {
      fail("{}: {} does not fit an int", d.path, *value);
    }
    return static_cast<std::int32_t>(*value);
  }
  fail("{}: expected an int, got {}", d.path, d.node->describe());
}

std::int64_t as_long(const Datum& datum) {
  const Datum d = unwrap(datum);
  if (const auto* value = std::get_if<std::int64_t>(&d.value->data())) return *value;
  if (const auto* value = std::get_if<std::int32_t>(&d.value->data())) return *value;
  fail("{}: expected a long, got {}", d.path, d.node->describe());
}

bool as_bool(const Datum& datum) {
  const Datum d = unwrap(datum);
  if (const auto* value = std::get_if<bool>(&d.value->data())) return *value;
  fail("{}: expected a boolean, got {}", d.path, d.node->describe());
}

std::string as_string(const Datum& datum) {
  const Datum d = unwrap(datum);
  if (const auto* value = std::get_if<std::string>(&d.value->data())) return *value;
  fail("{}: expected a string, got {}", d.path, d.node->describe());
}

Bytes as_bytes(const Datum& datum) {
  const Datum d = unwrap(datum);
  if (const auto* value = std::get_if<avro::Bytes>(&d.value->data())) return *value;
  fail("{}: expected bytes, got {}", d.path, d.node->describe());
}

void read_records(const std::string& location, const std::string& what, std::string_view item,
                  const std::function<void(const HeaderMetadata&)>& begin,
                  const std::function<void(const RecordView&)>& read) {
  with_context(what, [&] {
    std::istringstream in(read_file(local_path(location).string()));
    avro::ContainerReader reader(in, what);
    begin(reader.metadata());
    const avro::Node& root = reader.writer_schema().root();
    avro::Value value;
    for (std::size_t index = 0; reader.next(value); ++index) {
      with_context([&] { return fmt::format("{} {}", item, index); },
                   [&] {
                     read(RecordView(Datum{&root, &value, ""}));
                   });
    }
  });
}

std::vector<Datum> as_array(const Datum& datum) {
  const Datum d = unwrap(datum);
  const auto* array = std::get_if<avro::Array>(&d.value->data());
  if (d.node->type != avro::Type::kArray || array == nullptr)
    fail("{}: expected an array, got {}", d.path, d.node->describe());
  std::vector<Datum> items;
  items.reserve(array->size());
  for (std::size_t i = 0; i < array->size(); ++i) {
    items.push_back(Datum{d.node->items, &(*array)[i], fmt::format("{}[{}]", d.path, i)});
  }
  return items;
}

}  // namespace manifest_detail

namespace {

using manifest_detail::Datum;
using manifest_detail::list_of;
using manifest_detail::optional_field;
using manifest_detail::RecordView;
using manifest_detail::required_field;

// Manifest entry and data_file field ids (spec "Manifests").
constexpr std::int32_t kStatusId = 0, kSnapshotId = 1, kDataFileId = 2, kSequenceNumberId = 3,
                       kFileSequenceNumberId = 4;
constexpr std::int32_t kContentId = 134, kFilePathId = 100, kFileFormatId = 101, kPartitionId = 102,
                       kRecordCountId = 103, kFileSizeId = 104, kKeyMetadataId = 131, kSplitOffsetsId = 132,
                       kSplitOffsetElementId = 133, kEqualityIdsId = 135, kEqualityIdElementId = 136,
                       kSortOrderId = 140;

// A map<int, V> field: its field id, key id, value id and name.
struct MapField {
  std::int32_t id, key_id, value_id;
  const char* name;
};
constexpr MapField kColumnSizes{108, 117, 118, "column_sizes"};
constexpr MapField kValueCounts{109, 119, 120, "value_counts"};
constexpr MapField kNullValueCounts{110, 121, 122, "null_value_counts"};
constexpr MapField kNanValueCounts{137, 138, 139, "nan_value_counts"};
constexpr MapField kLowerBounds{125, 126, 127, "lower_bounds"};
constexpr MapField kUpperBounds{128, 129, 130, "upper_bounds"};

avro::Json map_type(const MapField& field, avro::Json value_type) {
  return avro::Json{{"type", "array"},
                    {"items",
                     {{"type", "record"},
                      {"name", fmt::format("k{}_v{}", field.key_id, field.value_id)},
                      {"fields", avro::Json::array({required_field("key", "int", field.key_id),
                                                    required_field("value", std::move(value_type), field.value_id)})}}},
                    {"logicalType", "map"}};
}

// A valid Avro name for a partition field name, the way Java's AvroSchemaUtil makes one:
// invalid characters become _x<HEX>, a leading digit gets a "_" in front.
std::string avro_name(std::string_view name) {
  std::string result;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (letter || (digit && i > 0)) {
      result.push_back(static_cast<char>(c));
    } else if (digit) {
      result += '_';
      result.push_back(static_cast<char>(c));
    } else {
      result += fmt::format("_x{:X}", c);
    }
  }
  return result.empty() ? "_" : result;
}

// Bytes of the fixed type holding decimals of PRECISION digits (spec "Avro" type mapping).
std::size_t decimal_fixed_size(int precision) {
  UInt128 limit = 1;
  for (int i = 0; i < precision; ++i) limit *= 10;
  std::size_t size = 1;
  while ((UInt128{1} << (8 * size - 1)) < limit) ++size;
  return size;
}

// The Avro schema of a primitive Iceberg type (spec Appendix A). Named fixed types are defined once
// and referenced by name afterwards, as Avro requires.
avro::Json avro_type(const Type& type, std::set<std::string>& defined) {
  const auto fixed = [&](std::string name, std::size_t size, avro::Json extra) -> avro::Json {
    if (!defined.insert(name).second) return name;
    avro::Json json{{"type", "fixed"}, {"name", name}, {"size", size}};
    for (auto& [key, value] : extra.items()) json[key] = value;
    return json;
  };
  switch (type.kind()) {
    case TypeKind::kBoolean:
      return "boolean";
    case TypeKind::kInt:
      return "int";
    case TypeKind::kLong:
      return "long";
    case TypeKind::kFloat:
      return "float";
    case TypeKind::kDouble:
      return "double";
    case TypeKind::kDate:
      return avro::Json{{"type", "int"}, {"logicalType", "date"}};
    case TypeKind::kTime:
      return avro::Json{{"type", "long"}, {"logicalType", "time-micros"}};
    case TypeKind::kTimestamp:
      return avro::Json{{"type", "long"}, {"logicalType", "timestamp-micros"}, {"adjust-to-utc", false}};
    case TypeKind::kTimestamptz:
      return avro::Json{{"type", "long"}, {"logicalType", "timestamp-micros"}, {"adjust-to-utc", true}};
    case TypeKind::kString:
      return "string";
    case TypeKind::kBinary:
      return "bytes";
    case TypeKind::kUuid:
      return fixed("uuid_fixed", 16, {{"logicalType", "uuid"}});
    case TypeKind::kFixed:
      return fixed(fmt::format("fixed_{}", type.fixed_length()), static_cast<std::size_t>(type.fixed_length()), {});
    case TypeKind::kDecimal:
      return fixed(
          fmt::format("decimal_{}_{}", type.decimal_precision(), type.decimal_scale()),
          decimal_fixed_size(type.decimal_precision()),
          {{"logicalType", "decimal"}, {"precision", type.decimal_precision()}, {"scale", type.decimal_scale()}});
    case TypeKind::kStruct:
    case TypeKind::kList:
    case TypeKind::kMap:
      break;
  }
  fail("{} has no Avro partition form", type.to_string());
}

// The partition value as the Avro type above holds it.
avro::Value partition_to_avro(const Type& type, const Literal& value) {
  return std::visit(
      [&](const auto& held) -> avro::Value {
        using T = std::decay_t<decltype(held)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return avro::Value();
        } else if constexpr (std::is_same_v<T, Uuid>) {
          return avro::Bytes(held.bytes.begin(), held.bytes.end());
        } else if constexpr (std::is_same_v<T, Decimal>) {
          const std::size_t size = decimal_fixed_size(type.decimal_precision());
          Bytes minimal = min_big_endian_bytes(held);
          if (minimal.size() > size) fail("decimal value does not fit {}", type.to_string());
          Bytes bytes(size - minimal.size(), (minimal[0] & 0x80) != 0 ? 0xFF : 0x00);
          bytes.insert(bytes.end(), minimal.begin(), minimal.end());
          return bytes;
        } else {
          return held;
        }
      },
      value);
}

std::string logical_type_of(const avro::Node& node) {
  const auto it = node.properties.is_object() ? node.properties.find("logicalType") : node.properties.end();
  if (node.properties.is_object() && it != node.properties.end() && it->is_string()) return it->get<std::string>();
  return {};
}

Decimal decimal_from_bytes(const Bytes& bytes, const std::string& path) {
  // Fixed types wider than 16 bytes may still hold a 128-bit value after sign extension.
  std::size_t start = 0;
  while (bytes.size() - start > 16 && (bytes[start] == 0x00 || bytes[start] == 0xFF) &&
         ((bytes[start + 1] & 0x80) != 0) == (bytes[start] == 0xFF)) {
    ++start;
  }
  const Literal literal = from_single_value(
      *decimal_type(38, 0), Bytes(bytes.begin() + static_cast<std::ptrdiff_t>(start), bytes.end()), path);
  return std::get<Decimal>(literal);
}

// A partition value from the Avro datum, by its Avro type (and logical type); TYPE, when the
// manifest header gave it, settles what Avro alone cannot (a uuid written as plain fixed[16]).
Literal partition_from_avro(const Datum& datum, const Type* type) {
  const Datum d = manifest_detail::unwrap(datum);
  const std::string logical = logical_type_of(*d.node);
  Literal literal;
  switch (d.node->type) {
    case avro::Type::kNull:
      return std::monostate{};
    case avro::Type::kBoolean:
      literal = manifest_detail::as_bool(d);
      break;
    case avro::Type::kInt:
      literal = manifest_detail::as_int(d);
      break;
    case avro::Type::kLong:
      literal = manifest_detail::as_long(d);
      break;
    case avro::Type::kFloat:
      literal = d.value->as<float>();
      break;
    case avro::Type::kDouble:
      literal = d.value->as<double>();
      break;
    case avro::Type::kString:
      if (logical == "uuid" || (type != nullptr && type->kind() == TypeKind::kUuid)) {
        literal = Uuid::parse(manifest_detail::as_string(d));
      } else {
        literal = manifest_detail::as_string(d);
      }
      break;
    case avro::Type::kBytes:
    case avro::Type::kFixed: {
      Bytes bytes = manifest_detail::as_bytes(d);
      if (logical == "decimal" || (type != nullptr && type->kind() == TypeKind::kDecimal)) {
        literal = decimal_from_bytes(bytes, d.path);
      } else if (logical == "uuid" || (type != nullptr && type->kind() == TypeKind::kUuid)) {
        literal = from_single_value(*uuid_type(), bytes, d.path);
      } else {
        literal = std::move(bytes);
      }
      break;
    }
    default:
      fail("{}: a partition value cannot be {}", d.path, d.node->describe());
  }
  if (type != nullptr) check_literal_type(*type, literal, d.path);
  return literal;
}

// Iceberg's order of partition values for summaries; NaN never reaches it.
bool literal_less(const Literal& a, const Literal& b) {
  return std::visit(
      [&](const auto& left) -> bool {
        using T = std::decay_t<decltype(left)>;
        const T& right = std::get<T>(b);
        if constexpr (std::is_same_v<T, std::monostate>) {
          return false;
        } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          if (left == right) return std::signbit(left) && !std::signbit(right);  // -0 < +0
          return left < right;
        } else if constexpr (std::is_same_v<T, Uuid>) {
          return left.bytes < right.bytes;
        } else if constexpr (std::is_same_v<T, Decimal>) {
          return left.unscaled < right.unscaled;
        } else {
          return left < right;  // strings compare bytes as unsigned, like Bytes
        }
      },
      a);
}

bool is_nan(const Literal& value) {
  if (const auto* f = std::get_if<float>(&value)) return std::isnan(*f);
  if (const auto* d = std::get_if<double>(&value)) return std::isnan(*d);
  return false;
}

avro::Value optional_long(const std::optional<std::int64_t>& value) {
  return value ? avro::Value(*value) : avro::Value();
}

template <typename V>
avro::Value map_value(const std::map<std::int32_t, V>& map) {
  if (map.empty()) return avro::Value();
  avro::Array items;
  items.reserve(map.size());
  for (const auto& [key, value] : map) {
    if constexpr (std::is_same_v<V, Bytes>) {
      items.push_back(avro::Record{{avro::Value(key), avro::Value(avro::Bytes(value))}});
    } else {
      items.push_back(avro::Record{{avro::Value(key), avro::Value(value)}});
    }
  }
  return items;
}

// A map<int, V> read from an array of key/value records (the spec's form) or an Avro map.
std::vector<std::pair<std::int32_t, Datum>> read_int_map(const RecordView& record, const MapField& field) {
  std::vector<std::pair<std::int32_t, Datum>> entries;
  const auto datum = record.find(field.id, field.name);
  if (!datum) return entries;
  if (datum->node->type == avro::Type::kMap) {
    const auto* map = std::get_if<avro::Map>(&datum->value->data());
    if (map == nullptr) fail("{}: expected a map", datum->path);
    for (const auto& [key, value] : *map) {
      std::int32_t id = 0;
      const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
      if (error != std::errc() || end != key.data() + key.size())
        fail("{}: key \"{}\" is not an int", datum->path, key);
      entries.emplace_back(id, Datum{datum->node->items, &value, fmt::format("{}[{}]", datum->path, key)});
    }
    return entries;
  }
  for (const Datum& item : manifest_detail::as_array(*datum)) {
    const RecordView pair(item);
    const std::int32_t key = manifest_detail::as_int(pair.get(field.key_id, "key"));
    entries.emplace_back(key, pair.get(field.value_id, "value"));
  }
  return entries;
}

template <typename V, typename Read>
std::map<std::int32_t, V> read_map(const RecordView& record, const MapField& field, Read read) {
  std::map<std::int32_t, V> map;
  for (const auto& [key, value] : read_int_map(record, field)) {
    if (!map.emplace(key, read(value)).second) fail("{}.{}: duplicate key {}", record.path(), field.name, key);
  }
  return map;
}

std::string content_name(ManifestContent content) { return content == ManifestContent::kData ? "data" : "deletes"; }

// The partition result types of SPEC over SCHEMA, in spec order.
std::vector<TypePtr> partition_types(const Schema& schema, const PartitionSpec& spec) {
  std::vector<TypePtr> types;
  for (const auto& field : spec.fields()) {
    const NestedField* source = schema.find_field(field.source_id);
    if (source == nullptr) fail("partition field {} has no source field {} in the schema", field.name, field.source_id);
    types.push_back(field.transform.result_type(source->type));
  }
  return types;
}

avro::Schema manifest_entry_schema(const PartitionSpec& spec, const std::vector<TypePtr>& types) {
  std::set<std::string> defined;
  avro::Json partition_fields = avro::Json::array();
  for (std::size_t i = 0; i < types.size(); ++i) {
    const PartitionField& field = spec.fields()[i];
    partition_fields.push_back(optional_field(avro_name(field.name), avro_type(*types[i], defined), field.field_id));
  }
  avro::Json data_file_fields = avro::Json::array({
      required_field("content", "int", kContentId),
      required_field("file_path", "string", kFilePathId),
      required_field("file_format", "string", kFileFormatId),
      required_field("partition", {{"type", "record"}, {"name", "r102"}, {"fields", partition_fields}}, kPartitionId),
      required_field("record_count", "long", kRecordCountId),
      required_field("file_size_in_bytes", "long", kFileSizeId),
  });
  for (const MapField* field : {&kColumnSizes, &kValueCounts, &kNullValueCounts, &kNanValueCounts}) {
    data_file_fields.push_back(optional_field(field->name, map_type(*field, "long"), field->id));
  }
  for (const MapField* field : {&kLowerBounds, &kUpperBounds}) {
    data_file_fields.push_back(optional_field(field->name, map_type(*field, "bytes"), field->id));
  }
  data_file_fields.push_back(optional_field("key_metadata", "bytes", kKeyMetadataId));
  data_file_fields.push_back(optional_field("split_offsets", list_of("long", kSplitOffsetElementId), kSplitOffsetsId));
  data_file_fields.push_back(optional_field("equality_ids", list_of("int", kEqualityIdElementId), kEqualityIdsId));
  data_file_fields.push_back(optional_field("sort_order_id", "int", kSortOrderId));
  const avro::Json schema{
      {"type", "record"},
      {"name", "manifest_entry"},
      {"fields",
       avro::Json::array({
           required_field("status", "int", kStatusId),
           optional_field("snapshot_id", "long", kSnapshotId),
           optional_field("sequence_number", "long", kSequenceNumberId),
           optional_field("file_sequence_number", "long", kFileSequenceNumberId),
           required_field("data_file", {{"type", "record"}, {"name", "r2"}, {"fields", data_file_fields}}, kDataFileId),
       })}};
  return avro::Schema::from_json(schema);
}

void check_entry(const ManifestEntry& entry, ManifestContent content, std::int64_t snapshot_id,
                 const std::vector<TypePtr>& types) {
  const DataFile& file = entry.data_file;
  const int status = static_cast<int>(entry.status);
  if (status < 0 || status > 2) fail("status: invalid value {}", status);
  const int file_content = static_cast<int>(file.content);
  if (file_content < 0 || file_content > 2) fail("data_file.content: invalid value {}", file_content);
  if ((file.content == FileContent::kData) != (content == ManifestContent::kData)) {
    fail("data_file.content: a {} file cannot be in a {} manifest",
         file.content == FileContent::kData ? "data" : "delete", content_name(content));
  }
  if (file.file_path.empty()) fail("data_file.file_path: must not be empty");
  if (file.file_format.empty()) fail("data_file.file_format: must not be empty");
  if (file.record_count < 0) fail("data_file.record_count: must not be negative, got {}", file.record_count);
  if (file.file_size_in_bytes < 0) {
    fail("data_file.file_size_in_bytes: must not be negative, got {}", file.file_size_in_bytes);
  }
  if (file.content == FileContent::kEqualityDeletes && file.equality_ids.empty()) {
    fail("data_file.equality_ids: required for equality delete files");
  }
  if (file.partition.size() != types.size()) {
    fail("data_file.partition: the spec has {} fields, the tuple {}", types.size(), file.partition.size());
  }
  for (std::size_t i = 0; i < types.size(); ++i) {
    check_literal_type(*types[i], file.partition[i], fmt::format("data_file.partition[{}]", i));
  }
  switch (entry.status) {
    case ManifestEntryStatus::kAdded:
      if (!entry.sequence_number && entry.snapshot_id && *entry.snapshot_id != snapshot_id) {
        fail("sequence_number: an ADDED entry of snapshot {} cannot inherit the sequence number of snapshot {}",
             *entry.snapshot_id, snapshot_id);
      }
      break;
    case ManifestEntryStatus::kExisting:
      if (!entry.snapshot_id) fail("snapshot_id: required for EXISTING entries");
      [[fallthrough]];
    case ManifestEntryStatus::kDeleted:
      if (!entry.sequence_number) fail("sequence_number: required for EXISTING and DELETED entries");
      if (!entry.file_sequence_number) fail("file_sequence_number: required for EXISTING and DELETED entries");
      break;
  }
}

avro::Value entry_to_avro(const ManifestEntry& entry, const std::vector<TypePtr>& types) {
  const DataFile& file = entry.data_file;
  avro::Record partition;
  for (std::size_t i = 0; i < types.size(); ++i)
    partition.fields.push_back(partition_to_avro(*types[i], file.partition[i]));
  avro::Record data_file{{
      avro::Value(static_cast<std::int32_t>(file.content)),
      avro::Value(file.file_path),
      avro::Value(file.file_format),
      avro::Value(std::move(partition)),
      avro::Value(file.record_count),
      avro::Value(file.file_size_in_bytes),
      map_value(file.column_sizes),
      map_value(file.value_counts),
      map_value(file.null_value_counts),
      map_value(file.nan_value_counts),
      map_value(file.lower_bounds),
      map_value(file.upper_bounds),
      file.key_metadata ? avro::Value(avro::Bytes(*file.key_metadata)) : avro::Value(),
  }};
  if (file.split_offsets.empty()) {
    data_file.fields.emplace_back();
  } else {
    avro::Array offsets;
    for (std::int64_t offset : file.split_offsets) offsets.emplace_back(offset);
    data_file.fields.emplace_back(std::move(offsets));
  }
  if (file.equality_ids.empty()) {
    data_file.fields.emplace_back();
  } else {
    avro::Array ids;
    for (std::int32_t id : file.equality_ids) ids.emplace_back(id);
    data_file.fields.emplace_back(std::move(ids));
  }
  data_file.fields.push_back(file.sort_order_id ? avro::Value(*file.sort_order_id) : avro::Value());
  return avro::Record{{
      avro::Value(static_cast<std::int32_t>(entry.status)),
      optional_long(entry.snapshot_id),
      optional_long(entry.sequence_number),
      optional_long(entry.file_sequence_number),
      avro::Value(std::move(data_file)),
  }};
}

// Summaries of the partition values of all entries (spec "Manifest Lists", field_summary).
std::vector<PartitionFieldSummary> summarize(const std::vector<TypePtr>& types,
                                             const std::vector<ManifestEntry>& entries) {
  std::vector<PartitionFieldSummary> summaries(types.size());
  for (std::size_t i = 0; i < types.size(); ++i) {
    PartitionFieldSummary& summary = summaries[i];
    summary.contains_nan = false;
    const Literal* lower = nullptr;
    const Literal* upper = nullptr;
    for (const ManifestEntry& entry : entries) {
      const Literal& value = entry.data_file.partition[i];
      if (std::holds_alternative<std::monostate>(value)) {
        summary.contains_null = true;
      } else if (is_nan(value)) {
        summary.contains_nan = true;
      } else {
        if (lower == nullptr || literal_less(value, *lower)) lower = &value;
        if (upper == nullptr || literal_less(*upper, value)) upper = &value;
      }
    }
    if (lower != nullptr) summary.lower_bound = to_single_value(*types[i], *lower);
    if (upper != nullptr) summary.upper_bound = to_single_value(*types[i], *upper);
  }
  return summaries;
}

// The partition field ids and result types the manifest header describes, when it describes them
// in a way this code understands; readers rely on the Avro types otherwise.
struct HeaderPartition {
  std::vector<std::int32_t> field_ids;
  std::vector<TypePtr> types;  // empty when the schema or a transform is unknown
};

std::optional<HeaderPartition> header_partition(const std::map<std::string, std::string>& metadata,
                                                std::int32_t spec_id) {
  const auto spec_text = metadata.find("partition-spec");
  if (spec_text == metadata.end()) return std::nullopt;
  Json fields;
  try {
    fields = Json::parse(spec_text->second);
  } catch (const Json::exception& e) {
    fail("header partition-spec is not JSON: {}", e.what());
  }
  if (fields.is_object() && fields.contains("fields")) fields = Json(fields["fields"]);
  if (!fields.is_array()) fail("header partition-spec: expected a list of fields");
  HeaderPartition result;
  for (const Json& field : fields) {
    if (!field.is_object() || !field.contains("field-id")) fail("header partition-spec: a field has no field-id");
    result.field_ids.push_back(as_int(field["field-id"], "header partition-spec field-id"));
  }
  try {
    const auto schema_text = metadata.find("schema");
    if (schema_text == metadata.end()) return result;
    const Schema schema = schema_from_json(Json::parse(schema_text->second));
    const PartitionSpec spec = partition_spec_from_json(Json{{"spec-id", spec_id}, {"fields", fields}});
    if (spec.has_unknown_transform()) return result;
    result.types = partition_types(schema, spec);
  } catch (const Error&) {
    result.types.clear();  // e.g. types of a newer format version: the Avro types still say enough
  } catch (const Json::exception&) {
    result.types.clear();
  }
  return result;
}

DataFile data_file_from_avro(const RecordView& record, const std::optional<HeaderPartition>& header) {
  DataFile file;
  if (const auto content = record.find(kContentId, "content")) {
    const std::int32_t value = manifest_detail::as_int(*content);
    if (value < 0 || value > 2) fail("{}: invalid file content {}", content->path, value);
    file.content = static_cast<FileContent>(value);
  }
  file.file_path = manifest_detail::as_string(record.get(kFilePathId, "file_path"));
  file.file_format = manifest_detail::as_string(record.get(kFileFormatId, "file_format"));
  std::transform(file.file_format.begin(), file.file_format.end(), file.file_format.begin(),
                 [](char c) { return static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c); });
  const RecordView partition(record.get(kPartitionId, "partition"));
  if (header) {
    for (std::size_t i = 0; i < header->field_ids.size(); ++i) {
      const std::int32_t id = header->field_ids[i];
      const auto value = partition.find(id, "");
      if (!value) {
        if (!partition.has(id, "")) fail("{}.partition: no field with id {}", record.path(), id);
        file.partition.emplace_back(std::monostate{});
        continue;
      }
      file.partition.push_back(partition_from_avro(*value, header->types.empty() ? nullptr : header->types[i].get()));
    }
  }
  file.record_count = manifest_detail::as_long(record.get(kRecordCountId, "record_count"));
  if (file.record_count < 0) fail("{}.record_count: negative: {}", record.path(), file.record_count);
  file.file_size_in_bytes = manifest_detail::as_long(record.get(kFileSizeId, "file_size_in_bytes"));
  if (file.file_size_in_bytes < 0) fail("{}.file_size_in_bytes: negative: {}", record.path(), file.file_size_in_bytes);
  const auto read_long = [](const Datum& d) { return manifest_detail::as_long(d); };
  const auto read_bytes = [](const Datum& d) { return manifest_detail::as_bytes(d); };
  file.column_sizes = read_map<std::int64_t>(record, kColumnSizes, read_long);
  file.value_counts = read_map<std::int64_t>(record, kValueCounts, read_long);
  file.null_value_counts = read_map<std::int64_t>(record, kNullValueCounts, read_long);
  file.nan_value_counts = read_map<std::int64_t>(record, kNanValueCounts, read_long);
  file.lower_bounds = read_map<Bytes>(record, kLowerBounds, read_bytes);
  file.upper_bounds = read_map<Bytes>(record, kUpperBounds, read_bytes);
  if (const auto key = record.find(kKeyMetadataId, "key_metadata")) file.key_metadata = manifest_detail::as_bytes(*key);
  if (const auto offsets = record.find(kSplitOffsetsId, "split_offsets")) {
    for (const Datum& item : manifest_detail::as_array(*offsets))
      file.split_offsets.push_back(manifest_detail::as_long(item));
  }
  if (const auto ids = record.find(kEqualityIdsId, "equality_ids")) {
    for (const Datum& item : manifest_detail::as_array(*ids))
      file.equality_ids.push_back(manifest_detail::as_int(item));
  }
  if (const auto order = record.find(kSortOrderId, "sort_order_id"))
    file.sort_order_id = manifest_detail::as_int(*order);
  return file;
}

// One manifest_entry record, with what it inherits from MANIFEST resolved. HEADER is the
// partition layout the file's header gives, if it gives one.
ManifestEntry entry_from_avro(const RecordView& record, const std::optional<HeaderPartition>& header,
                              const ManifestFile& manifest) {
  ManifestEntry entry;
  const std::int32_t status = manifest_detail::as_int(record.get(kStatusId, "status"));
  if (status < 0 || status > 2) fail("status: invalid value {}", status);
  entry.status = static_cast<ManifestEntryStatus>(status);
  if (const auto id = record.find(kSnapshotId, "snapshot_id")) entry.snapshot_id = manifest_detail::as_long(*id);
  if (const auto n = record.find(kSequenceNumberId, "sequence_number")) {
    entry.sequence_number = manifest_detail::as_long(*n);
  }
  if (const auto n = record.find(kFileSequenceNumberId, "file_sequence_number")) {
    entry.file_sequence_number = manifest_detail::as_long(*n);
  }
  const RecordView data_file(record.get(kDataFileId, "data_file"));
  std::optional<HeaderPartition> partition_layout = header;
  if (!partition_layout) {
    // No header spec: the partition record's own fields, in written order, give the layout.
    const Datum partition = data_file.get(kPartitionId, "partition");
    partition_layout.emplace();
    for (const auto& field : partition.node->fields) {
      const auto id = field.properties.find("field-id");
      if (id == field.properties.end() || !id->is_number_integer()) {
        fail("data_file.partition.{}: no field-id", field.name);
      }
      partition_layout->field_ids.push_back(static_cast<std::int32_t>(id->get<std::int64_t>()));
    }
  }
  entry.data_file = data_file_from_avro(data_file, partition_layout);

  // Inheritance (spec "Snapshot ID Inheritance", "Sequence Number Inheritance").
  if (!entry.snapshot_id) entry.snapshot_id = manifest.added_snapshot_id;
  const bool inherits = entry.status == ManifestEntryStatus::kAdded || manifest.sequence_number == 0;
  if (inherits && manifest.sequence_number != kUnassignedSequenceNumber) {
    if (!entry.sequence_number) entry.sequence_number = manifest.sequence_number;
    if (!entry.file_sequence_number) entry.file_sequence_number = manifest.sequence_number;
  }
  if (entry.status == ManifestEntryStatus::kExisting && !entry.sequence_number) {
    fail("sequence_number: an EXISTING entry must have one");
  }
  return entry;
}

}  // namespace

ManifestFile write_manifest(const std::string& location, const Schema& schema, const PartitionSpec& spec,
                            ManifestContent content, std::int64_t snapshot_id,
                            const std::vector<ManifestEntry>& entries) {
  const std::string what = fmt::format("iceberg manifest {}", location);
  return with_context(what, [&] {
    const std::filesystem::path path = local_path(location);
    if (spec.has_unknown_transform()) fail("partition spec {} has a transform binberg does not know", spec.spec_id());
    const std::vector<TypePtr> types = partition_types(schema, spec);

    ManifestFile manifest;
    manifest.manifest_path = location;
    manifest.partition_spec_id = spec.spec_id();
    manifest.content = content;
    manifest.added_snapshot_id = snapshot_id;
    std::optional<std::int64_t> min_sequence_number;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const ManifestEntry& entry = entries[i];
      with_context([&] { return fmt::format("entry {} ({})", i, entry.data_file.file_path); },
                   [&] { check_entry(entry, content, snapshot_id, types); });
      const std::int64_t rows = entry.data_file.record_count;
      switch (entry.status) {
        case ManifestEntryStatus::kAdded:
          ++manifest.added_files_count;
          manifest.added_rows_count += rows;
          break;
        case ManifestEntryStatus::kExisting:
          ++manifest.existing_files_count;
          manifest.existing_rows_count += rows;
          break;
        case ManifestEntryStatus::kDeleted:
          ++manifest.deleted_files_count;
          manifest.deleted_rows_count += rows;
          break;
      }
      if (entry.status != ManifestEntryStatus::kDeleted && entry.sequence_number) {
        min_sequence_number = std::min(min_sequence_number.value_or(*entry.sequence_number), *entry.sequence_number);
      }
    }
    manifest.min_sequence_number = min_sequence_number.value_or(kUnassignedSequenceNumber);
    manifest.partitions = summarize(types, entries);

    avro::ContainerWriterOptions options;
    options.codec = avro::Codec::kDeflate;
    options.metadata = {
        {"schema", schema_to_json(schema).dump()},
        {"schema-id", std::to_string(schema.schema_id())},
        {"partition-spec", partition_spec_to_json(spec)["fields"].dump()},
        {"partition-spec-id", std::to_string(spec.spec_id())},
        {"format-version", "2"},
        {"content", content_name(content)},
    };
    std::ostringstream out;
    avro::ContainerWriter writer(out, manifest_entry_schema(spec, types), options, what);
    for (const ManifestEntry& entry : entries) writer.append(entry_to_avro(entry, types));
    writer.close();
    const std::string bytes = std::move(out).str();
    manifest.manifest_length = static_cast<std::int64_t>(bytes.size());
    durable::write_new_file(path, bytes, "writing it", "iceberg.manifest.before_close");
    return manifest;
  });
}

std::vector<ManifestEntry> read_manifest(const ManifestFile& manifest) {
  std::vector<ManifestEntry> entries;
  std::optional<HeaderPartition> header;
  manifest_detail::read_records(
      manifest.manifest_path, fmt::format("iceberg manifest {}", manifest.manifest_path), "entry",
      [&](const manifest_detail::HeaderMetadata& metadata) {
        header = header_partition(metadata, manifest.partition_spec_id);
      },
      [&](const RecordView& record) { entries.push_back(entry_from_avro(record, header, manifest)); });
  return entries;
}

}  // namespace binberg::iceberg
