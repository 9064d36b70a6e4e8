#include "envelope/change_envelope.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "core/error.h"
#include "core/version.h"
#include "envelope/column_codec.h"

namespace binberg::envelope {

namespace {

std::string avro_namespace(std::string_view topic) {
  std::string result;
  std::size_t start = 0;
  while (start <= topic.size()) {
    const std::size_t dot = std::min(topic.find('.', start), topic.size());
    if (!result.empty()) result += '.';
    result += avro_field_name(topic.substr(start, dot - start));
    start = dot + 1;
  }
  return result;
}

// The value's fields are as nullable as the columns; the key's are all required, without defaults.
enum class Fields { kNullableAsColumns, kAllRequired };

// One field per column, with the column's description; NOT NULL columns are not unions. A
// renamed column's earlier names become aliases, but none that a present column has (Avro matches
// a field by name first, so such an alias could never apply).
avro::Json column_fields(const TableSchema& table, const std::vector<std::size_t>& columns, Fields kind,
                         const ColumnHistory& history) {
  const bool all_required = kind == Fields::kAllRequired;
  avro::Json fields = avro::Json::array();
  std::map<std::string, std::string> taken;  // Avro name -> column name
  for (const Column& column : table.columns) taken.emplace(avro_field_name(column.name), column.name);
  for (const std::size_t index : columns) {
    const Column& column = table.columns[index];
    const std::string name = avro_field_name(column.name);
    if (const std::string& first = taken.at(name); first != column.name) {
      throw ConfigError(fmt::format("table {}: columns {} and {} both become the Avro field name {}",
                                    table.qualified_name(), first, column.name, name));
    }
    avro::Json field{{"name", name}};
    if (column.nullable && !all_required) {
      field["type"] = avro::Json::array({"null", column_avro_type(column)});
      field["default"] = nullptr;
    } else {
      field["type"] = column_avro_type(column);
      if (const auto it = history.defaults.find(column.name); it != history.defaults.end() && !all_required) {
        field["default"] = avro::default_json(to_avro(column, it->second));
      }
    }
    if (const auto it = history.earlier_names.find(column.name); it != history.earlier_names.end()) {
      avro::Json aliases = avro::Json::array();
      for (const std::string& earlier : it->second) {
        const std::string alias = avro_field_name(earlier);
        if (!taken.contains(alias) && std::find(aliases.begin(), aliases.end(), alias) == aliases.end()) {
          aliases.push_back(alias);
        }
      }
      if (!aliases.empty()) field["aliases"] = std::move(aliases);
    }
    field["binberg.column"] = column_description(column);
    fields.push_back(std::move(field));
  }
  return fields;
}

avro::Json optional_of(avro::Json type) { return avro::Json::array({"null", std::move(type)}); }

avro::Json source_record() {
  const auto field = [](const char* name, avro::Json type) { return avro::Json{{"name", name}, {"type", type}}; };
  avro::Json snapshot = field("snapshot", avro::Json::array({"string", "null"}));
  snapshot["default"] = "false";
  avro::Json table = field("table", optional_of("string"));
  table["default"] = nullptr;
  avro::Json gtid = field("gtid", optional_of("string"));
  gtid["default"] = nullptr;
  return avro::Json{
      {"type", "record"},
      {"name", "Source"},
      {"namespace", "io.debezium.connector.mysql"},
      {"fields",
       avro::Json::array({field("version", "string"), field("connector", "string"), field("name", "string"),
                          field("ts_ms", "long"), snapshot, field("db", "string"), table, field("server_id", "long"),
                          gtid, field("file", "string"), field("pos", "long"), field("row", "int")})}};
}

std::vector<std::size_t> all_columns(const TableSchema& table) {
  std::vector<std::size_t> columns(table.columns.size());
  for (std::size_t i = 0; i < columns.size(); ++i) columns[i] = i;
  return columns;
}

// A row image as a "Value" record.
avro::Value row_datum(const TableSchema& table, const RowImage& image) {
  if (image.size() != table.columns.size()) {
    fail("table {}: a row image has {} values for {} columns", table.qualified_name(), image.size(),
         table.columns.size());
  }
  avro::Record record;
  record.fields.reserve(image.size());
  for (std::size_t i = 0; i < image.size(); ++i) {
    const Column& column = table.columns[i];
    if (is_null(image[i])) {
      if (!column.nullable)
        fail("table {}: column {} is NOT NULL but the row holds null", table.qualified_name(), column.name);
      record.fields.emplace_back(avro::Union(0, avro::Value()));
    } else if (column.nullable) {
      record.fields.emplace_back(avro::Union(1, to_avro(column, image[i])));
    } else {
      record.fields.emplace_back(to_avro(column, image[i]));
    }
  }
  return record;
}

RowImage row_from_datum(const TableSchema& table, const avro::Value& datum) {
  const auto& fields = datum.as<avro::Record>().fields;
  if (fields.size() != table.columns.size()) {
    fail("table {}: a row holds {} fields for {} columns", table.qualified_name(), fields.size(), table.columns.size());
  }
  RowImage image;
  image.reserve(fields.size());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const Column& column = table.columns[i];
    const avro::Value& value = column.nullable ? fields[i].as<avro::Union>().value() : fields[i];
    image.push_back(value.is_null() ? Value(std::monostate{}) : from_avro(column, value));
  }
  return image;
}

avro::Value optional_row(const TableSchema& table, const std::optional<RowImage>& image) {
  if (!image) return avro::Union(0, avro::Value());
  return avro::Union(1, row_datum(table, *image));
}

}  // namespace

EnvelopeSchemas envelope_schemas(const TableSchema& table, std::string_view topic, const ColumnHistory& history) {
  const std::string ns = avro_namespace(topic);
  avro::Json primary_key = avro::Json::array();
  for (const std::size_t index : table.primary_key) primary_key.push_back(table.columns[index].name);
  const avro::Json value_record{
      {"type", "record"},
      {"name", "Value"},
      {"fields", column_fields(table, all_columns(table), Fields::kNullableAsColumns, history)}};
  avro::Json before{{"name", "before"}, {"type", optional_of(value_record)}, {"default", nullptr}};
  avro::Json after{{"name", "after"}, {"type", optional_of("Value")}, {"default", nullptr}};
  avro::Json ts_ms{{"name", "ts_ms"}, {"type", optional_of("long")}, {"default", nullptr}};
  const avro::Json envelope{
      {"type", "record"},
      {"name", "Envelope"},
      {"namespace", ns},
      {"connect.name", ns + ".Envelope"},
      {"binberg.table", {{"database", table.database}, {"table", table.table}, {"primary_key", primary_key}}},
      {"fields", avro::Json::array({before, after, avro::Json{{"name", "source"}, {"type", source_record()}},
                                    avro::Json{{"name", "op"}, {"type", "string"}}, ts_ms})}};
  EnvelopeSchemas schemas{std::nullopt, avro::Schema::from_json(envelope)};
  if (!table.primary_key.empty()) {
    schemas.key = avro::Schema::from_json(
        avro::Json{{"type", "record"},
                   {"name", "Key"},
                   {"namespace", ns},
                   {"fields", column_fields(table, table.primary_key, Fields::kAllRequired, history)}});
  }
  return schemas;
}

TableSchema table_schema_of(const avro::Schema& value_schema) {
  const avro::Node& root = value_schema.root();
  const std::string where = fmt::format("envelope schema {}", root.name);
  const avro::Json& properties = root.properties;
  if (root.type != avro::Type::kRecord || !properties.is_object() || !properties.contains("binberg.table")) {
    fail("{}: not a binberg change envelope (no binberg.table property)", where);
  }
  const avro::Json& description = properties["binberg.table"];
  TableSchema table;
  std::vector<std::string> primary_key;
  try {
    table.database = description.at("database").get<std::string>();
    table.table = description.at("table").get<std::string>();
    primary_key = description.value("primary_key", std::vector<std::string>());
  } catch (const avro::Json::exception& error) {
    fail("{}: binberg.table: {}", where, error.what());
  }
  const avro::Field* after = root.find_field("after");
  if (after == nullptr || after->type->type != avro::Type::kUnion || after->type->branches.size() != 2 ||
      after->type->branches[1]->type != avro::Type::kRecord) {
    fail("{}: no after record", where);
  }
  for (const avro::Field& field : after->type->branches[1]->fields) {
    table.columns.push_back(column_from_description(field.properties.value("binberg.column", avro::Json()),
                                                    where + " field " + field.name));
  }
  for (const auto& name : primary_key) {
    const auto index = table.column_index(name);
    if (!index) fail("{}: primary-key column {} is not a column", where, name);
    table.primary_key.push_back(*index);
  }
  return table;
}

avro::Value key_datum(const TableSchema& table, const RowImage& key) {
  if (key.size() != table.primary_key.size()) {
    fail("table {}: a key has {} values for {} key columns", table.qualified_name(), key.size(),
         table.primary_key.size());
  }
  avro::Record record;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const Column& column = table.columns[table.primary_key[i]];
    if (is_null(key[i])) fail("table {}: key column {} is null", table.qualified_name(), column.name);
    record.fields.push_back(to_avro(column, key[i]));
  }
  return record;
}

RowImage key_from_datum(const TableSchema& table, const avro::Value& key) {
  const auto& fields = key.as<avro::Record>().fields;
  if (fields.size() != table.primary_key.size()) {
    fail("table {}: a key holds {} fields for {} key columns", table.qualified_name(), fields.size(),
         table.primary_key.size());
  }
  RowImage values;
  for (std::size_t i = 0; i < fields.size(); ++i)
    values.push_back(from_avro(table.columns[table.primary_key[i]], fields[i]));
  return values;
}

avro::Value envelope_datum(const ChangeEvent& event, std::string_view connector_name, std::int64_t ts_ms) {
  const TableSchema& table = *event.schema;
  const SourceInfo& source = event.source;
  avro::Record source_datum =
      avro::Record::of(std::string(kVersion), std::string("mysql"), std::string(connector_name), source.commit_ts_ms,
                       avro::Union(0, std::string(event.op == Op::kSnapshot ? "true" : "false")), source.database,
                       avro::Union(1, source.table), static_cast<std::int64_t>(source.server_id),
                       source.gtid.empty() ? avro::Union(0, avro::Value()) : avro::Union(1, source.gtid), source.file,
                       static_cast<std::int64_t>(source.end_pos), static_cast<std::int32_t>(source.row_index));
  return avro::Record::of(optional_row(table, event.before), optional_row(table, event.after), std::move(source_datum),
                          std::string(1, static_cast<char>(event.op)), avro::Union(1, ts_ms));
}

ChangeEvent change_event_from_datum(const avro::Value& envelope, std::shared_ptr<const TableSchema> table) {
  const auto& fields = envelope.as<avro::Record>().fields;
  if (fields.size() != 5) fail("envelope of {}: {} fields, not 5", table->qualified_name(), fields.size());
  ChangeEvent event;
  const std::string& op = fields[3].as<std::string>();
  if (op != "r" && op != "c" && op != "u" && op != "d") {
    fail("envelope of {}: unknown op '{}'", table->qualified_name(), op);
  }
  event.op = static_cast<Op>(op[0]);
  const auto image = [&](const avro::Value& field) -> std::optional<RowImage> {
    const avro::Union& branch = field.as<avro::Union>();
    if (branch.value().is_null()) return std::nullopt;
    return row_from_datum(*table, branch.value());
  };
  event.before = image(fields[0]);
  event.after = image(fields[1]);
  const bool wants_before = event.op == Op::kUpdate || event.op == Op::kDelete;
  const bool wants_after = event.op != Op::kDelete;
  if (event.before.has_value() != wants_before || event.after.has_value() != wants_after) {
    fail("envelope of {}: op '{}' with {} before image and {} after image", table->qualified_name(), op,
         event.before ? "a" : "no", event.after ? "an" : "no");
  }
  const auto& source = fields[2].as<avro::Record>().fields;
  if (source.size() != 12) fail("envelope of {}: source has {} fields, not 12", table->qualified_name(), source.size());
  const auto optional_string = [](const avro::Value& value) {
    const avro::Value& held = value.as<avro::Union>().value();
    return held.is_null() ? std::string() : held.as<std::string>();
  };
  event.source.commit_ts_ms = source[3].as<std::int64_t>();
  event.source.database = source[5].as<std::string>();
  event.source.table = optional_string(source[6]);
  event.source.server_id = static_cast<std::uint32_t>(source[7].as<std::int64_t>());
  event.source.gtid = optional_string(source[8]);
  event.source.file = source[9].as<std::string>();
  event.source.end_pos = static_cast<std::uint64_t>(source[10].as<std::int64_t>());
  event.source.row_index = static_cast<std::uint32_t>(source[11].as<std::int32_t>());
  event.event_id = make_event_id(event.source, event.op);
  event.schema = std::move(table);
  return event;
}

}  // namespace binberg::envelope
