#pragma once

// Helpers shared by the source's integration tests: positions, readers and typed SELECTs.

#include <map>
#include <string>
#include <vector>

#include "core/canonical.h"
#include "core/source_transaction.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "mysql/text_value.h"
#include "mysql/transaction_reader.h"
#include "support/test_services.h"

namespace binberg::mysql::testing {

inline BinlogPosition master_position(Connection& db) {
  auto status = db.query("SHOW MASTER STATUS");
  if (status.rows.size() != 1) fail("SHOW MASTER STATUS returned {} rows", status.rows.size());
  return BinlogPosition{*status.rows[0][0], std::stoull(*status.rows[0][1])};
}

inline StreamOptions reader_options(const BinlogPosition& from, bool blocking = false) {
  StreamOptions options;
  options.connection = binberg::testing::mariadb_replication_options();
  options.server_id = 9100;
  options.start_position = from;
  options.blocking = blocking;
  return options;
}

// Every whole transaction from FROM to the current end of the binlog.
inline std::vector<SourceTransaction> read_transactions(const BinlogPosition& from) {
  Connection db = Connection::open(binberg::testing::mariadb_admin_options());
  TransactionReader reader(reader_options(from), CharsetNames::load(db));
  std::vector<SourceTransaction> out;
  while (auto txn = reader.next()) out.push_back(std::move(*txn));
  return out;
}

// Rows of TABLE keyed by id, typed with SCHEMA's columns (as the snapshot reads them), in UTC.
inline std::map<std::string, RowImage> select_rows(Connection& db, const TableSchema& schema) {
  db.execute("SET time_zone = '+00:00'");
  std::string columns;
  for (const auto& column : schema.columns) columns += (columns.empty() ? "" : ", ") + select_expression(column);
  std::map<std::string, RowImage> rows;
  for (const auto& row : db.query(fmt::format("SELECT {} FROM {}", columns, quote_identifier(schema.table))).rows) {
    RowImage image;
    for (std::size_t i = 0; i < row.size(); ++i) image.push_back(parse_text_value(schema.columns[i], row[i]));
    rows[*row[0]] = std::move(image);
  }
  return rows;
}

inline std::string describe(const TableSchema& schema, const RowImage& image) {
  std::string out;
  for (std::size_t i = 0; i < image.size(); ++i) {
    out += fmt::format("{}{}={}", i ? ", " : "", schema.columns[i].name, to_display_string(image[i]));
  }
  return out;
}

}  // namespace binberg::mysql::testing
