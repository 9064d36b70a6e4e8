// Every supported column type, with edge values, inserted, updated and deleted on the real
// MariaDB: the values decoded from the binlog must equal what SELECT returns for the same rows.

#include <gtest/gtest.h>

#include "mysql/snapshot_reader.h"
#include "source_test_support.h"

namespace binberg::mysql {
namespace {

using testing::describe;

constexpr const char* kColumns = R"(
  id INT PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
  i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  dec65 DECIMAL(65,30), dec10 DECIMAL(10,2), dec5 DECIMAL(5,0), dec18 DECIMAL(18,9), dec4 DECIMAL(4,4),
  f FLOAT, d DOUBLE,
  b1 BIT(1), b13 BIT(13), b64 BIT(64),
  c CHAR(10), cw CHAR(100) CHARACTER SET utf8mb4, vc VARCHAR(300) CHARACTER SET utf8mb4, vl VARCHAR(20) CHARACTER SET latin1,
  vu VARCHAR(10) CHARACTER SET ucs2, t TEXT, lt LONGTEXT CHARACTER SET utf8mb4,
  bin BINARY(4), vb VARBINARY(10), bl BLOB, mbl MEDIUMBLOB,
  dt DATE, tm0 TIME, tm1 TIME(1), tm3 TIME(3), tm6 TIME(6),
  dtm0 DATETIME, dtm2 DATETIME(2), dtm6 DATETIME(6),
  ts0 TIMESTAMP NULL DEFAULT NULL, ts3 TIMESTAMP(3) NULL DEFAULT NULL, ts6 TIMESTAMP(6) NULL DEFAULT NULL,
  y YEAR, e ENUM('a','b','çé'), s SET('x','y','z'), j JSON, g GEOMETRY)";

// Column values in kColumns order after id.
const std::vector<std::string> kRows = {
    // minimum values
    "-128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0, "
    "'-99999999999999999999999999999999999.999999999999999999999999999999', -99999999.99, -99999, "
    "-999999999.999999999, -0.9999, -3.4028e38, -1.7976931348623157e308, 0, 0, 0, "
    "'', '', '', '', '', '', '', x'00000000', '', '', '', "
    "'1000-01-01', '-838:59:59', '-838:59:58.9', '-838:59:58.999', '-00:00:00.000001', "
    "'1000-01-01 00:00:00', '1000-01-01 00:00:00.01', '1000-01-01 00:00:00.000000', "
    "'1970-01-01 00:00:01', '1970-01-01 00:00:01.001', '1970-01-01 00:00:01.000001', "
    "1901, 'a', '', '{}', ST_GeomFromText('POINT(0 0)')",
    // maximum values, 4-byte UTF-8, long strings
    "127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, "
    "18446744073709551615, '99999999999999999999999999999999999.999999999999999999999999999999', 99999999.99, "
    "99999, 999999999.999999999, 0.9999, 3.4028e38, 1.7976931348623157e308, 1, 8191, 18446744073709551615, "
    "'abcdefghij', REPEAT('\u00e9', 100), REPEAT('\U0001F600', 300), '\u00e7\u00e0\u00e9\u00fc', 'd\u00e9j\u00e0', "
    "REPEAT('t', 5000), REPEAT('\U0001F9EA', 20000), x'DEADBEEF', x'00FF00', REPEAT(x'00FF', 500), "
    "REPEAT(x'AB', 70000), '9999-12-31', '838:59:59', '838:59:58.9', '838:59:58.999', '838:59:58.999999', "
    "'9999-12-31 23:59:59', '9999-12-31 23:59:59.99', '9999-12-31 23:59:59.999999', "
    "'2038-01-19 03:14:07', '2038-01-19 03:14:07.999', '2038-01-19 03:14:07.999999', "
    "2155, '\u00e7\u00e9', 'x,y,z', '{\"k\": [1, 2.5, \"\u00e9\"], \"n\": null}', "
    "ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0))')",
    // NULL everywhere
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
    // zeros, negative zero, padding
    "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -0.0, 0, 0, 0, 'ab  ', ' x', ' ', 'a ', 'b', ' ', ' ', "
    "x'61', x'00', x'00', x'', '1970-01-01', '00:00:00', '00:00:00.0', '00:00:00', '00:00:00', "
    "'1970-01-01 00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00', NULL, NULL, NULL, 2000, 'b', 'y', "
    "'[]', ST_GeomFromText('LINESTRING(0 0,1 1)')",
    // assorted fractions and small magnitudes
    "-1, 1, -1, 1, -1, 1, -1, 1, -1, 1, '0.000000000000000000000000000001', -0.01, 1, -0.000000001, 0.0001, "
    "1.2345678, 0.1, 1, 4096, 9223372036854775808, 'x', '\u4e2d\u6587', 'a\\tb\\nc', '\u00ff', '\u20ac', "
    "'\\0\\\\', 'Z', x'0102', x'FF', x'', x'00', '2000-02-29', '-01:02:03', '-01:02:03.4', '12:34:56.789', "
    "'-01:02:03.000004', '2000-02-29 01:02:03', '2000-02-29 01:02:03.45', '2000-02-29 01:02:03.000004', "
    "'2001-09-09 01:46:40', '2001-09-09 01:46:40.5', '2001-09-09 01:46:40.123456', 1999, 'a', 'x,z', "
    "'\"str\"', ST_GeomFromText('MULTIPOINT(1 2,3 4)')",
};

class TypeMatrixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.execute("SET time_zone = '+00:00'");
    db_.execute("SET sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'");
    table_ = binberg::testing::unique_name("types");
    db_.execute(fmt::format("CREATE TABLE {} ({}) DEFAULT CHARSET=utf8mb4", table_, kColumns));
  }
  void TearDown() override { db_.execute("DROP TABLE IF EXISTS " + table_); }

  Connection db_ = Connection::open(binberg::testing::mariadb_admin_options());
  std::string table_;
};

void expect_rows_equal(const TableSchema& schema, const RowImage& decoded, const RowImage& selected,
                       const std::string& what) {
  ASSERT_EQ(decoded.size(), selected.size()) << what;
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    EXPECT_EQ(decoded[i], selected[i]) << what << ": column " << schema.columns[i].name << " ("
                                       << to_string(schema.columns[i].type) << ") decoded "
                                       << to_display_string(decoded[i]) << ", SELECT gives "
                                       << to_display_string(selected[i]);
  }
  EXPECT_EQ(canonical_row(schema, decoded), canonical_row(schema, selected)) << what;
}

TEST_F(TypeMatrixTest, BinlogValuesEqualSelectedValues) {
  const BinlogPosition start = testing::master_position(db_);
  db_.execute("START TRANSACTION");
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    db_.execute(fmt::format("INSERT INTO {} VALUES ({}, {})", table_, i + 1, kRows[i]));
  }
  db_.execute("COMMIT");

  auto transactions = testing::read_transactions(start);
  ASSERT_FALSE(transactions.empty());
  const SourceTransaction& inserts = transactions.back();
  ASSERT_EQ(inserts.events.size(), kRows.size());
  const TableSchema& schema = *inserts.events[0].schema;
  ASSERT_EQ(schema.table, table_);
  EXPECT_EQ(schema.primary_key, (std::vector<std::size_t>{0}));

  const auto inserted = testing::select_rows(db_, schema);
  for (const auto& event : inserts.events) {
    ASSERT_EQ(event.op, Op::kCreate);
    ASSERT_TRUE(event.after.has_value());
    const std::string id = to_display_string((*event.after)[0]);
    expect_rows_equal(schema, *event.after, inserted.at(id), "insert of row " + id);
  }

  // Every row changes every column (the rows rotate by one), then every row is deleted.
  const BinlogPosition before_update = testing::master_position(db_);
  db_.execute("START TRANSACTION");
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    db_.execute(fmt::format("DELETE FROM {} WHERE id = {}", table_, i + 1));
    db_.execute(fmt::format("INSERT INTO {} VALUES ({}, {})", table_, i + 1, kRows[(i + 1) % kRows.size()]));
  }
  db_.execute("COMMIT");
  std::string set_all;
  for (std::size_t i = 1; i < schema.columns.size(); ++i) {
    const std::string name = quote_identifier(schema.columns[i].name);
    set_all += fmt::format("{}{} = {}", i > 1 ? ", " : "", name, name);
  }
  db_.execute(fmt::format("UPDATE {} SET {} WHERE id = 1", table_, "ti = ti"));  // no-op: not logged
  db_.execute(
      fmt::format("UPDATE {} t, {} u SET t.vc = u.vc, t.dec65 = u.dec65 WHERE t.id = 1 AND u.id = 2", table_, table_));
  const auto updated = testing::select_rows(db_, schema);
  db_.execute("DELETE FROM " + table_);

  auto later = testing::read_transactions(before_update);
  ASSERT_EQ(later.size(), 3u);
  for (const auto& event : later[0].events) {
    const auto& image = event.op == Op::kDelete ? *event.before : *event.after;
    const std::string id = to_display_string(image[0]);
    if (event.op == Op::kDelete) expect_rows_equal(schema, image, inserted.at(id), "delete of row " + id);
  }
  ASSERT_EQ(later[1].events.size(), 1u);
  const ChangeEvent& update = later[1].events[0];
  ASSERT_EQ(update.op, Op::kUpdate);
  ASSERT_TRUE(update.before && update.after);
  EXPECT_NE(canonical_row(schema, *update.before), canonical_row(schema, *update.after));
  expect_rows_equal(schema, *update.after, updated.at("1"), "update after image");
  ASSERT_EQ(later[2].events.size(), kRows.size());
  for (const auto& event : later[2].events) {
    ASSERT_EQ(event.op, Op::kDelete);
    const std::string id = to_display_string((*event.before)[0]);
    expect_rows_equal(schema, *event.before, updated.at(id), "final delete of row " + id);
  }
}

TEST_F(TypeMatrixTest, SchemaCarriesFullMetadata) {
  const BinlogPosition start = testing::master_position(db_);
  db_.execute(fmt::format("INSERT INTO {} (id) VALUES (1)", table_));
  auto transactions = testing::read_transactions(start);
  ASSERT_FALSE(transactions.empty());
  const TableSchema& schema = *transactions.back().events.at(0).schema;
  auto column = [&](const char* name) { return schema.columns.at(schema.column_index(name).value()); };
  EXPECT_FALSE(column("id").nullable);
  EXPECT_TRUE(column("ti").nullable);
  EXPECT_TRUE(column("biu").is_unsigned);
  EXPECT_FALSE(column("bi").is_unsigned);
  EXPECT_EQ(column("dec65").precision, 65u);
  EXPECT_EQ(column("dec65").scale, 30u);
  EXPECT_EQ(column("tm3").precision, 3u);
  EXPECT_EQ(column("b13").precision, 13u);
  EXPECT_EQ(column("vl").charset, "latin1");
  EXPECT_EQ(column("vc").charset, "utf8mb4");
  EXPECT_EQ(column("bl").charset, "binary");
  EXPECT_EQ(column("e").symbols, (std::vector<std::string>{"a", "b", "\u00e7\u00e9"}));
  EXPECT_EQ(column("s").symbols, (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(column("bin").type, SourceType::kBinary);
  EXPECT_EQ(column("cw").type, SourceType::kChar);
  EXPECT_EQ(column("lt").type, SourceType::kText);
  EXPECT_EQ(column("g").type, SourceType::kGeometry);
}

TEST_F(TypeMatrixTest, InformationSchemaGivesTheSameSchemaAsTheBinlog) {
  const BinlogPosition start = testing::master_position(db_);
  db_.execute(fmt::format("INSERT INTO {} (id) VALUES (1)", table_));
  auto transactions = testing::read_transactions(start);
  ASSERT_FALSE(transactions.empty());
  const TableSchema& from_binlog = *transactions.back().events.at(0).schema;
  const auto from_catalog = load_table_schema(db_, from_binlog.database, table_);
  ASSERT_EQ(from_catalog->columns.size(), from_binlog.columns.size());
  EXPECT_EQ(from_catalog->primary_key, from_binlog.primary_key);
  for (std::size_t i = 0; i < from_binlog.columns.size(); ++i) {
    const Column& a = from_binlog.columns[i];
    const Column& b = from_catalog->columns[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(to_string(a.type), to_string(b.type)) << a.name;
    EXPECT_EQ(a.is_unsigned, b.is_unsigned) << a.name;
    EXPECT_EQ(a.nullable, b.nullable) << a.name;
    EXPECT_EQ(a.symbols, b.symbols) << a.name;
    if (a.type == SourceType::kDecimal || a.type == SourceType::kBit || a.type == SourceType::kTime ||
        a.type == SourceType::kDateTime || a.type == SourceType::kTimestamp) {
      EXPECT_EQ(a.precision, b.precision) << a.name;
      EXPECT_EQ(a.scale, b.scale) << a.name;
    }
  }
}

}  // namespace
}  // namespace binberg::mysql
