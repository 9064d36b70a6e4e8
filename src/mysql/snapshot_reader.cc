#include "mysql/snapshot_reader.h"

#include <algorithm>
#include <map>

#include "core/assert.h"
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

// What the server says about the primary key of SCHEMA's table: its columns in key order, with
// their key prefix lengths and collations.
std::vector<KeyPart> load_key_parts(Connection& connection, const TableSchema& schema) {
  const auto result = connection.query(fmt::format(
      "SELECT s.COLUMN_NAME, s.SUB_PART, c.COLLATION_NAME FROM information_schema.STATISTICS s JOIN "
      "information_schema.COLUMNS c ON c.TABLE_SCHEMA = s.TABLE_SCHEMA AND c.TABLE_NAME = s.TABLE_NAME AND "
      "c.COLUMN_NAME = s.COLUMN_NAME WHERE s.TABLE_SCHEMA = '{}' AND s.TABLE_NAME = '{}' AND s.INDEX_NAME = "
      "'PRIMARY' ORDER BY s.SEQ_IN_INDEX",
      connection.escape(schema.database), connection.escape(schema.table)));
  std::vector<KeyPart> parts;
  for (const auto& row : result.rows) {
    KeyPart part{row[0].value_or(""), std::nullopt, row[2].value_or("")};
    if (row[1]) part.prefix_length = static_cast<std::uint32_t>(std::stoul(*row[1]));
    parts.push_back(std::move(part));
  }
  return parts;
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
                                  std::size_t chunk_rows, ReadMethod method) {
  if (chunk_rows == 0) throw ConfigError("snapshot: chunk size must be positive");
  if (tables.empty()) fail("snapshot {}: no tables", options.address());
  TableSnapshot snapshot(Connection::open(options), chunk_rows);
  Connection& db = snapshot.connection_;
  db.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
  db.execute("SET time_zone = '+00:00'");
  // A streamed SELECT waits while its reader works on a chunk: as long as an idle connection may,
  // not the 60 s of the default net_write_timeout, after which the server drops the connection.
  db.execute("SET SESSION net_write_timeout = GREATEST(@@net_write_timeout, @@wait_timeout)");
  for (const TableName& table : tables) {
    std::shared_ptr<const TableSchema> schema = load_table_schema(db, table.database, table.table);
    snapshot.pagers_.push_back(method == ReadMethod::kKeysetPaging
                                   ? KeysetPager::for_table(schema, load_key_parts(db, *schema))
                                   : std::nullopt);
    snapshot.schemas_.push_back(std::move(schema));
  }
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

std::vector<Row> TableSnapshot::next_rows() {
  if (std::optional<KeysetPager>& pager = pagers_[current_]) {
    const std::optional<std::string> sql = pager->next_query(chunk_rows_);
    return sql ? connection_.query(*sql).rows : std::vector<Row>{};
  }
  const TableSchema& schema = *schemas_[current_];
  if (!stream_) {
    stream_ = connection_.stream(fmt::format("SELECT {} FROM {}.{}", select_list(schema),
                                             quote_identifier(schema.database), quote_identifier(schema.table)));
  }
  std::vector<Row> rows;
  while (rows.size() < chunk_rows_) {
    std::optional<Row> row = stream_->next();
    if (!row) break;
    rows.push_back(std::move(*row));
  }
  return rows;
}

void TableSnapshot::next_table() {
  stream_.reset();
  ++current_;
  table_rows_read_ = 0;
  if (current_ == schemas_.size()) connection_.execute("COMMIT");
}

std::vector<ChangeEvent> TableSnapshot::next_chunk() {
  std::vector<ChangeEvent> events;
  while (events.empty() && current_ < schemas_.size()) {
    const std::shared_ptr<const TableSchema>& schema = schemas_[current_];
    const std::vector<Row> rows = next_rows();
    BINBERG_ASSERT(rows.size() <= chunk_rows_, "{}: a chunk of {} rows, more than {}", schema->qualified_name(),
                   rows.size(), chunk_rows_);
    for (const auto& row : rows) {
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
    rows_read_ += rows.size();
    if (pagers_[current_] && !events.empty()) pagers_[current_]->advance(*events.front().after, *events.back().after);
    if (rows.size() < chunk_rows_) next_table();
  }
  if (!events.empty()) failpoint::hit("source.snapshot.after_chunk");
  return events;
}

}  // namespace binberg::mysql
