#include "mysql/snapshot_reader.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "core/failpoint.h"
#include "mysql/text_value.h"

namespace binberg::mysql {
namespace {

SourceType type_from_information_schema(const std::string& data_type, const std::string& charset,
                                        const std::string& where) {
  static const std::map<std::string, SourceType, std::less<>> kTypes = {
      {"tinyint", SourceType::kTinyInt},
      {"smallint", SourceType::kSmallInt},
      {"mediumint", SourceType::kMediumInt},
      {"int", SourceType::kInt},
      {"bigint", SourceType::kBigInt},
      {"float", SourceType::kFloat},
      {"double", SourceType::kDouble},
      {"decimal", SourceType::kDecimal},
      {"bit", SourceType::kBit},
      {"year", SourceType::kYear},
      {"date", SourceType::kDate},
      {"time", SourceType::kTime},
      {"datetime", SourceType::kDateTime},
      {"timestamp", SourceType::kTimestamp},
      {"char", SourceType::kChar},
      {"varchar", SourceType::kVarchar},
      {"binary", SourceType::kBinary},
      {"varbinary", SourceType::kVarbinary},
      {"enum", SourceType::kEnum},
      {"set", SourceType::kSet},
      {"json", SourceType::kJson},
  };
  if (auto it = kTypes.find(data_type); it != kTypes.end()) return it->second;
  if (data_type.ends_with("text")) return SourceType::kText;
  if (data_type.ends_with("blob"))
    return charset.empty() || charset == "binary" ? SourceType::kBlob : SourceType::kText;
  for (const char* geometry : {"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
                               "multipolygon", "geometrycollection"}) {
    if (data_type == geometry) return SourceType::kGeometry;
  }
  fail("{}: column type '{}' is not supported", where, data_type);
}

// "enum('a','b''c')" -> {"a", "b'c"}
std::vector<std::string> parse_symbols(const std::string& column_type) {
  std::vector<std::string> symbols;
  std::size_t i = column_type.find('(');
  while (i != std::string::npos && i < column_type.size()) {
    i = column_type.find('\'', i);
    if (i == std::string::npos) break;
    std::string symbol;
    for (++i; i < column_type.size(); ++i) {
      if (column_type[i] == '\'' && i + 1 < column_type.size() && column_type[i + 1] == '\'') {
        symbol += '\'';
        ++i;
      } else if (column_type[i] == '\'') {
        break;
      } else {
        symbol += column_type[i];
      }
    }
    symbols.push_back(std::move(symbol));
    ++i;
  }
  return symbols;
}

std::string sql_literal(Connection& connection, const Value& value) {
  if (const auto* text = std::get_if<Text>(&value)) return "'" + connection.escape(text->utf8) + "'";
  if (std::holds_alternative<Bytes>(value) || std::holds_alternative<Decimal>(value) ||
      std::holds_alternative<std::int64_t>(value) || std::holds_alternative<std::uint64_t>(value)) {
    const std::string shown = to_display_string(value);
    return std::holds_alternative<Bytes>(value) ? "x'" + shown.substr(2) + "'" : shown;
  }
  if (const auto* ts = std::get_if<Timestamp>(&value)) return "'" + to_display_string(DateTime{ts->micros}) + "'";
  return "'" + to_display_string(value) + "'";
}

}  // namespace

std::shared_ptr<const TableSchema> load_table_schema(Connection& connection, const std::string& database,
                                                     const std::string& table) {
  auto schema = find_table_schema(connection, database, table);
  if (!schema) fail("{}.{}: table not found", database, table);
  return schema;
}

std::shared_ptr<const TableSchema> find_table_schema(Connection& connection, const std::string& database,
                                                     const std::string& table) {
  const std::string where = fmt::format("{}.{}", database, table);
  auto columns = connection.query(fmt::format(
      "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION, "
      "CHARACTER_SET_NAME, CHARACTER_OCTET_LENGTH FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '{}' AND "
      "TABLE_NAME = '{}' ORDER BY ORDINAL_POSITION",
      connection.escape(database), connection.escape(table)));
  if (columns.rows.empty()) return nullptr;
  auto schema = std::make_shared<TableSchema>();
  schema->database = database;
  schema->table = table;
  for (const auto& row : columns.rows) {
    Column column;
    column.name = *row[0];
    const std::string column_type = row[2].value_or("");
    column.charset = row[7].value_or("");
    column.type = type_from_information_schema(*row[1], column.charset, where + "." + column.name);
    column.nullable = row[3] == "YES";
    column.is_unsigned = column_type.find("unsigned") != std::string::npos;
    if (column.type == SourceType::kDecimal) {
      column.precision = static_cast<std::uint32_t>(std::stoul(row[4].value_or("0")));
      column.scale = static_cast<std::uint32_t>(std::stoul(row[5].value_or("0")));
    } else if (column.type == SourceType::kBit) {
      column.precision = static_cast<std::uint32_t>(std::stoul(row[4].value_or("0")));
    } else if (row[6]) {
      column.precision = static_cast<std::uint32_t>(std::stoul(*row[6]));
    }
    if (row[8])
      column.max_bytes = static_cast<std::uint32_t>(std::min<unsigned long long>(std::stoull(*row[8]), UINT32_MAX));
    if (column.type == SourceType::kEnum || column.type == SourceType::kSet)
      column.symbols = parse_symbols(column_type);
    if (column.charset.empty() && (column.type == SourceType::kBlob || column.type == SourceType::kBinary ||
                                   column.type == SourceType::kVarbinary || column.type == SourceType::kGeometry)) {
      column.charset = "binary";
    }
    schema->columns.push_back(std::move(column));
  }
  auto keys = connection.query(fmt::format(
      "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '{}' AND TABLE_NAME = '{}' AND "
      "INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX",
      connection.escape(database), connection.escape(table)));
  for (const auto& row : keys.rows) schema->primary_key.push_back(*schema->column_index(*row[0]));
  return schema;
}

TableSnapshot TableSnapshot::open(const ConnectionOptions& options, const std::vector<TableName>& tables,
                                  std::size_t chunk_rows) {
  if (chunk_rows == 0) throw ConfigError("snapshot: chunk size must be positive");
  if (tables.empty()) fail("snapshot {}: no tables", options.address());
  TableSnapshot snapshot(Connection::open(options), chunk_rows);
  Connection& db = snapshot.connection_;
  db.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
  db.execute("SET time_zone = '+00:00'");
  for (const TableName& table : tables) snapshot.schemas_.push_back(load_table_schema(db, table.database, table.table));
  db.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT");
  // MariaDB reports the binlog position matching the snapshot: no FLUSH TABLES WITH READ LOCK.
  std::string file;
  std::uint64_t pos = 0;
  for (const auto& row : db.query("SHOW STATUS LIKE 'binlog_snapshot_%'").rows) {
    if (row[0] == "Binlog_snapshot_file") file = row[1].value_or("");
    if (row[0] == "Binlog_snapshot_position") pos = std::stoull(row[1].value_or("0"));
  }
  if (file.empty()) fail("snapshot {}: server reports no binlog snapshot position (is log_bin on?)", options.address());
  snapshot.position_.binlog = BinlogPosition{file, pos};
  snapshot.position_.gtid = GtidPosition::parse(
      db.scalar(fmt::format("SELECT BINLOG_GTID_POS('{}', {})", db.escape(file), pos)).value_or(""));
  return snapshot;
}

std::string TableSnapshot::chunk_query(const TableSchema& schema) {
  std::string columns, order;
  for (const auto& column : schema.columns) columns += (columns.empty() ? "" : ", ") + select_expression(column);
  std::vector<std::size_t> order_by = schema.primary_key;
  if (order_by.empty()) {
    // Without a key, order by every column; pages are stable inside the snapshot transaction.
    for (std::size_t i = 0; i < schema.columns.size(); ++i) order_by.push_back(i);
  }
  std::string key_columns, key_values;
  for (std::size_t i = 0; i < order_by.size(); ++i) {
    const std::string name = quote_identifier(schema.columns[order_by[i]].name);
    order += (i ? ", " : "") + name;
    key_columns += (i ? ", " : "") + name;
    if (last_key_) key_values += (i ? ", " : "") + sql_literal(connection_, (*last_key_)[i]);
  }
  std::string sql =
      fmt::format("SELECT {} FROM {}.{}", columns, quote_identifier(schema.database), quote_identifier(schema.table));
  if (!schema.primary_key.empty() && last_key_) sql += fmt::format(" WHERE ({}) > ({})", key_columns, key_values);
  sql += fmt::format(" ORDER BY {} LIMIT {}", order, chunk_rows_);
  if (schema.primary_key.empty()) sql += fmt::format(" OFFSET {}", table_rows_read_);
  return sql;
}

void TableSnapshot::next_table() {
  ++current_;
  last_key_.reset();
  table_rows_read_ = 0;
  if (current_ == schemas_.size()) connection_.execute("COMMIT");
}

std::vector<ChangeEvent> TableSnapshot::next_chunk() {
  std::vector<ChangeEvent> events;
  while (events.empty() && current_ < schemas_.size()) {
    const std::shared_ptr<const TableSchema>& schema = schemas_[current_];
    const auto result = connection_.query(chunk_query(*schema));
    for (const auto& row : result.rows) {
      ChangeEvent event;
      event.op = Op::kSnapshot;
      event.schema = schema;
      RowImage image;
      image.reserve(row.size());
      for (std::size_t i = 0; i < row.size(); ++i) image.push_back(parse_text_value(schema->columns[i], row[i]));
      event.after = std::move(image);
      event.source.file = position_.binlog.file;
      event.source.end_pos = position_.binlog.offset;
      event.source.gtid = position_.gtid.to_string();
      event.source.database = schema->database;
      event.source.table = schema->table;
      event.source.row_index = static_cast<std::uint32_t>(table_rows_read_++);
      event.event_id = make_event_id(event.source, event.op);
      events.push_back(std::move(event));
    }
    rows_read_ += result.rows.size();
    if (!schema->primary_key.empty() && !events.empty()) last_key_ = primary_key_of(*schema, *events.back().after);
    if (result.rows.size() < chunk_rows_) next_table();
  }
  if (!events.empty()) failpoint::hit("source.snapshot.after_chunk");
  return events;
}

}  // namespace binberg::mysql
