// Snapshot + stream while a writer keeps changing the table: replaying the stream from the
// snapshot position over the snapshot rows gives exactly the table's final state, with every
// update and delete finding the row image it expects (nothing missing, nothing seen twice).

#include "mysql/snapshot_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <random>
#include <thread>

#include "core/failpoint.h"
#include "source_test_support.h"

namespace binberg::mysql {
namespace {

using namespace std::chrono_literals;

std::string key_of(const TableSchema& schema, const RowImage& image) {
  std::string key;
  for (const auto& value : primary_key_of(schema, image)) append_canonical_value(key, value);
  return key;
}

TEST(SnapshotReaderTest, SnapshotPlusStreamEqualsTableUnderConcurrentWrites) {
  Connection db = Connection::open(binberg::testing::mariadb_admin_options());
  const std::string table = binberg::testing::unique_name("snap");
  db.execute(fmt::format(
      "CREATE TABLE {} (id INT PRIMARY KEY, k BIGINT UNSIGNED, v VARCHAR(40), amount DECIMAL(12,3), at DATETIME(6))",
      table));
  for (int first = 0; first < 3000; first += 500) {
    std::string sql = fmt::format("INSERT INTO {} VALUES ", table);
    for (int id = first; id < first + 500; ++id) {
      sql += fmt::format("{}({}, {}, 'v{}', {}.125, '2026-01-01 00:00:00.{:06}')", id == first ? "" : ",", id, id * 7,
                         id, id, id);
    }
    db.execute(sql);
  }

  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::thread writer([&] {
    Connection w = Connection::open(binberg::testing::mariadb_admin_options());
    std::mt19937 random(42);
    while (!stop) {
      const int id = static_cast<int>(random() % 4000);
      switch (random() % 3) {
        case 0:
          w.execute(fmt::format("INSERT IGNORE INTO {} VALUES ({}, {}, 'new', 1.5, NOW(6))", table, id, random()));
          break;
        case 1:
          w.execute(fmt::format("UPDATE {} SET v = CONCAT(v, '+'), amount = amount + 1 WHERE id = {}", table, id));
          break;
        default:
          w.execute(fmt::format("DELETE FROM {} WHERE id = {}", table, id));
      }
      ++writes;
    }
  });
  while (writes < 50) std::this_thread::sleep_for(5ms);

  // Between two chunks the writer commits ten more changes: the copy races them (a gate on the
  // writer's progress, not a pause that a loaded machine may make too short).
  failpoint::arm_call("source.snapshot.after_chunk", [&] {
    const int before = writes;
    while (writes < before + 10) std::this_thread::sleep_for(1ms);
  });
  auto snapshot = TableSnapshot::open(binberg::testing::mariadb_replication_options(),
                                      binberg::testing::stack().mariadb().database, table, 250);
  const auto schema = snapshot.schema();
  std::map<std::string, RowImage> state;
  std::size_t chunks = 0;
  for (;;) {
    auto chunk = snapshot.next_chunk();
    if (chunk.empty()) break;
    EXPECT_LE(chunk.size(), 250u);
    ++chunks;
    for (auto& event : chunk) {
      EXPECT_EQ(event.op, Op::kSnapshot);
      EXPECT_TRUE(state.emplace(key_of(*schema, *event.after), *event.after).second) << "row read twice";
    }
  }
  failpoint::disarm_all();
  stop = true;
  writer.join();
  EXPECT_GT(chunks, 10u);
  EXPECT_GT(writes.load(), 100);

  std::size_t applied = 0;
  for (const auto& txn : testing::read_transactions(snapshot.position().binlog)) {
    for (const auto& event : txn.events) {
      if (event.source.table != table) continue;
      ++applied;
      if (event.before) {
        auto it = state.find(key_of(*schema, *event.before));
        ASSERT_NE(it, state.end()) << "change to a row the snapshot+stream never had: " << event.event_id;
        ASSERT_EQ(canonical_row(*schema, it->second), canonical_row(*schema, *event.before))
            << "before image differs from the state so far: " << event.event_id;
        state.erase(it);
      }
      if (event.after) {
        ASSERT_TRUE(state.emplace(key_of(*schema, *event.after), *event.after).second)
            << "insert of a row that exists: " << event.event_id;
      }
    }
  }
  EXPECT_GT(applied, 0u);

  std::map<std::string, RowImage> expected;
  for (auto& [id, image] : testing::select_rows(db, *schema)) expected.emplace(key_of(*schema, image), image);
  ASSERT_EQ(state.size(), expected.size());
  for (const auto& [key, image] : expected) {
    ASSERT_TRUE(state.count(key));
    EXPECT_EQ(canonical_row(*schema, state.at(key)), canonical_row(*schema, image))
        << testing::describe(*schema, image);
  }
  db.execute("DROP TABLE " + table);
}

// Two tables in one snapshot are copies of one instant: transactions that move a unit from one
// table to the other while the snapshot reads them never show up in one copy only.
TEST(SnapshotReaderTest, TablesOfOneSnapshotAreCopiesOfOneInstant) {
  Connection db = Connection::open(binberg::testing::mariadb_admin_options());
  const std::string from = binberg::testing::unique_name("snapfrom"), to = binberg::testing::unique_name("snapto");
  db.execute(fmt::format("CREATE TABLE {} (id INT PRIMARY KEY, units INT NOT NULL)", from));
  db.execute(fmt::format("CREATE TABLE {} (id INT PRIMARY KEY, units INT NOT NULL)", to));
  db.execute(fmt::format("INSERT INTO {} SELECT seq, 100 FROM seq_1_to_2000", from));
  db.execute(fmt::format("INSERT INTO {} SELECT seq, 0 FROM seq_1_to_2000", to));
  std::atomic<bool> stop{false};
  std::atomic<int> moves{0};
  std::thread mover([&] {
    Connection w = Connection::open(binberg::testing::mariadb_admin_options());
    for (int i = 0; !stop; ++i) {
      const int id = 1 + (i * 7) % 2000;
      w.execute("START TRANSACTION");
      w.execute(fmt::format("UPDATE {} SET units = units - 1 WHERE id = {}", from, id));
      w.execute(fmt::format("UPDATE {} SET units = units + 1 WHERE id = {}", to, id));
      w.execute("COMMIT");
      ++moves;
    }
  });
  while (moves < 20) std::this_thread::sleep_for(5ms);
  const std::string database = binberg::testing::stack().mariadb().database;
  auto snapshot = TableSnapshot::open(binberg::testing::mariadb_replication_options(),
                                      {TableName{database, from}, TableName{database, to}}, 100);
  ASSERT_EQ(snapshot.schemas().size(), 2u);
  std::map<std::string, std::int64_t> units;  // table -> sum of units in its copy
  std::map<std::string, std::size_t> rows;
  for (auto chunk = snapshot.next_chunk(); !chunk.empty(); chunk = snapshot.next_chunk()) {
    for (const auto& event : chunk) {
      units[event.source.table] += std::get<std::int64_t>((*event.after)[1]);
      ++rows[event.source.table];
    }
    std::this_thread::sleep_for(1ms);  // let transactions commit while the copies are read
  }
  stop = true;
  mover.join();
  EXPECT_EQ(rows[from], 2000u);
  EXPECT_EQ(rows[to], 2000u);
  EXPECT_EQ(units[from] + units[to], 200'000) << "a transfer is in one copy only";
  EXPECT_GT(units[to], 0) << "no transfer before the snapshot";
  EXPECT_EQ(snapshot.rows_read(), 4000u);
  db.execute(fmt::format("DROP TABLE {}, {}", from, to));
}

// The key matrix: tables keyed by types the server orders in its own way (ENUM and SET by their
// index, FLOAT as a float, collations that ignore case and trailing spaces, bytes with NULs, 4-byte
// characters) and a keyless table of identical rows, copied at chunk sizes 1, 2 and 7 while a writer
// changes the table between every two chunks (failpoint source.snapshot.after_chunk). The copy
// holds exactly the rows of the snapshot point: each once, none that was written after it.
enum class ReadBy { kKeysetPaging, kStreaming };

struct KeyCase {
  const char* name;
  const char* columns;               // the key columns' definitions (a column v INT follows)
  const char* key;                   // the primary key's columns; "" for a keyless table
  std::vector<std::string> rows;     // the key columns' values of each row, before the copy
  std::vector<std::string> inserts;  // rows the writer adds during the copy, one per chunk
  ReadBy read_by = ReadBy::kKeysetPaging;
};

// Names a case in gtest's messages.
void PrintTo(const KeyCase& key_case, std::ostream* out) { *out << key_case.name; }

std::vector<std::string> repeated(const std::string& row, int times) { return std::vector<std::string>(times, row); }

std::vector<std::string> concat(std::vector<std::vector<std::string>> parts) {
  std::vector<std::string> all;
  for (auto& part : parts) std::move(part.begin(), part.end(), std::back_inserter(all));
  return all;
}

const std::vector<KeyCase>& key_cases() {
  static const std::vector<KeyCase> cases = {
      {"EnumKey", "k ENUM('z','a','m','b','y','c') NOT NULL", "k", {"'z'", "'a'", "'m'", "'b'"}, {"'y'", "'c'"}},
      {"SetKey",
       "k SET('x','b','a','d') NOT NULL",
       "k",
       {"''", "'x'", "'b'", "'x,b'", "'a'", "'a,x'", "'b,a'", "'x,b,a'", "'d'", "'d,x'"},
       {"'d,b'", "'x,b,a,d'"}},
      {"FloatKey",
       "k FLOAT NOT NULL",
       "k",
       {"0.1", "0.2", "0.3", "1.1", "-3.5", "16777217", "1e30", "3.4e38", "-1e-30", "0"},
       {"0.15", "2.2"}},
      {"DoubleKey",
       "k DOUBLE NOT NULL",
       "k",
       {"0.1", "0.3", "0.30000000000000004", "1e-300", "-1.7976931348623157e308", "1.7976931348623157e308",
        "2.2250738585072014e-308", "0", "123456789.12345679"},
       {"0.2", "7"}},
      {"DecimalKey",
       "k DECIMAL(30,10) NOT NULL",
       "k",
       {"-12345678901234567890.1234567890", "-1.5", "0", "0.0000000001", "1.5", "99999999999999999999.9999999999"},
       {"0.5", "-0.5"}},
      {"Datetime6Key",
       "k DATETIME(6) NOT NULL",
       "k",
       {"'1000-01-01 00:00:00'", "'2020-01-01 00:00:00'", "'2020-01-01 00:00:00.000001'", "'2020-01-01 00:00:00.1'",
        "'2020-01-01 00:00:00.999999'", "'9999-12-31 23:59:59.999999'"},
       {"'2020-01-01 00:00:00.5'", "'1999-12-31 23:59:59.999999'"}},
      {"Time6Key",
       "k TIME(6) NOT NULL",
       "k",
       {"'-838:59:59'", "'-00:00:00.5'", "'-00:00:00.000001'", "'00:00:00'", "'00:00:00.000001'", "'23:59:59.999999'",
        "'24:00:00'", "'838:59:59'"},
       {"'-01:00:00'", "'100:00:00.25'"}},
      {"VarcharCaseInsensitiveWithTrailingSpacesKey",
       "k VARCHAR(20) COLLATE utf8mb4_unicode_ci NOT NULL",
       "k",
       {"''", "'a '", "'B'", "'b  x'", "'b x'", "'C\\t'", "'\u00e9'", "' z'", "'Zz  '"},
       {"'A1'", "'bb '"}},
      {"VarcharCaseInsensitiveNoPadKey",
       "k VARCHAR(20) COLLATE utf8mb4_unicode_nopad_ci NOT NULL",
       "k",
       {"'a'", "'a '", "'a  '", "'B'", "'b '", "'c\\0'"},
       {"'A   '", "'b  '"}},
      {"VarcharLatin1CaseInsensitiveKey",
       "k VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_general_ci NOT NULL",
       "k",
       {"'a '", "'B'", "'\u00e4'", "'\u00c5x'", "'z'"},
       {"'c'", "'\u00d6'"}},
      {"CharNoPadWithControlCharactersKey",
       "k CHAR(4) COLLATE utf8mb4_nopad_bin NOT NULL",
       "k",
       {"''", "'a'", "'a\\0'", "'a\\t'", "'b'", "'b\\0\\0'"},
       {"'a\\n'", "'c'"},
       ReadBy::kStreaming},  // MariaDB orders 'a\0' before 'a' but compares it after: not paged
      {"VarbinaryWithNulBytesKey",
       "k VARBINARY(8) NOT NULL",
       "k",
       {"x''", "x'00'", "x'0000'", "x'000001'", "x'0001'", "x'01'", "x'61'", "x'6100'", "x'ff'", "x'ff00'"},
       {"x'000000'", "x'fe'"}},
      {"BinaryPaddedWithNulBytesKey",
       "k BINARY(3) NOT NULL",
       "k",
       {"x''", "x'0001'", "x'01'", "x'ff'", "x'610000'"},
       {"x'000001'", "x'02'"}},
      {"Utf8mb4FourByteCharactersKey",
       "k VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci NOT NULL",
       "k",
       {"'a'", "'a\U0001F600'", "'a\U0001F601'", "'\U0001F600'", "'\U00010400'", "'b'", "'\u20ac'"},
       {"'\U0001F602'", "'a\U0001F602'"}},
      {"Utf8mb4FourByteCharactersBinaryCollationKey",
       "k VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL",
       "k",
       {"'a'", "'a\U0001F600'", "'\U0001F600'", "'\U00010400'", "'\uffff'", "'\u20ac'"},
       {"'\U0001F602'", "'A'"}},
      {"CompositeKeyOfEnumFloatCaseInsensitiveTextAndBytes",
       "e ENUM('z','a','m') NOT NULL, f FLOAT NOT NULL, s VARCHAR(10) COLLATE utf8mb4_general_ci NOT NULL, "
       "b VARBINARY(4) NOT NULL",
       "e, f, s, b",
       {"'z', 0.1, 'a ', x'00'", "'z', 0.1, 'a ', x'0000'", "'z', 0.1, 'B', x'00'", "'z', 2.5, 'a ', x'00'",
        "'a', 0.1, 'a ', x'00'", "'a', 0.1, 'B', x''", "'a', 0.1, 'B', x'00'", "'a', 2.5, 'B', x'00'",
        "'m', 0.1, 'a ', x'00'", "'m', 0.1, 'B', x'00'", "'m', 2.5, 'a ', x'00'", "'m', 2.5, 'a ', x'01'"},
       {"'a', 0.2, 'b', x'01'", "'z', 3.5, 'C', x''"}},
      {"CompositeKeyOfSetDecimalDatetimeAndTime",
       "s SET('x','y') NOT NULL, d DECIMAL(6,2) NOT NULL, t DATETIME(6) NOT NULL, m TIME(6) NOT NULL",
       "s, d, t, m",
       {"'', 1.5, '2020-01-01 00:00:00.5', '-00:00:00.5'", "'', 1.5, '2020-01-01 00:00:00.5', '00:00:00.5'",
        "'x', -1.5, '2020-01-01 00:00:00', '00:00:00'", "'x', 1.5, '2020-01-01 00:00:00', '00:00:00'",
        "'y', 1.5, '2020-01-01 00:00:00.000001', '838:59:59'", "'x,y', 0, '1000-01-01 00:00:00', '-838:59:59'"},
       {"'y', 0.5, '2020-01-01 00:00:00', '00:00:00'", "'x,y', 0, '1000-01-01 00:00:00', '-00:00:00.000001'"}},
      {"CompositeKeyOfBitYearDateTimestampAndUnsigned",
       "b BIT(10) NOT NULL, y YEAR NOT NULL, d DATE NOT NULL, ts TIMESTAMP(6) NOT NULL, u BIGINT UNSIGNED NOT NULL",
       "b, y, d, ts, u",
       {"b'1', 2020, '2020-02-29', '2021-03-28 01:30:00.5', 18446744073709551615",
        "b'1', 2020, '2020-02-29', '2021-03-28 01:30:00.5', 0",
        "b'1111111111', 1901, '1000-01-01', '1970-01-01 00:00:01', 5",
        "b'10', 2155, '9999-12-31', '2038-01-19 03:14:07.999999', 9223372036854775808"},
       {"b'11', 2000, '2000-01-01', '2000-01-01 00:00:00', 1", "b'1', 2020, '2020-02-29', '2021-03-28 01:30:00.5', 7"}},
      {"KeylessWithManyIdenticalRows",
       "s VARCHAR(5) COLLATE utf8mb4_general_ci",
       "",
       concat(
           {repeated("'x'", 30), repeated("'X'", 10), repeated("NULL", 10), repeated("'y '", 5), repeated("'y'", 5)}),
       {"'z'", "'x'"},
       ReadBy::kStreaming},
  };
  return cases;
}

// The rows of TABLE now, as canonical rows, sorted (as many times as the table holds each);
// DESCRIBED gets each one's text.
std::vector<std::string> table_rows(Connection& db, const TableSchema& schema,
                                    std::map<std::string, std::string>& described) {
  db.execute("SET time_zone = '+00:00'");
  std::string columns;
  for (const auto& column : schema.columns) columns += (columns.empty() ? "" : ", ") + select_expression(column);
  std::vector<std::string> rows;
  for (const auto& row : db.query(fmt::format("SELECT {} FROM {}", columns, quote_identifier(schema.table))).rows) {
    RowImage image;
    for (std::size_t i = 0; i < row.size(); ++i) image.push_back(parse_text_value(schema.columns[i], row[i]));
    rows.push_back(canonical_row(schema, image));
    described[rows.back()] = testing::describe(schema, image);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// The rows in ROWS that OTHER lacks (both sorted), described.
std::string rows_not_in(const std::vector<std::string>& rows, const std::vector<std::string>& other,
                        const std::map<std::string, std::string>& described) {
  std::vector<std::string> only;
  std::set_difference(rows.begin(), rows.end(), other.begin(), other.end(), std::back_inserter(only));
  std::string text;
  for (const auto& row : only) text += "\n    " + described.at(row);
  return text;
}

class SnapshotKeyMatrixTest : public ::testing::TestWithParam<std::tuple<KeyCase, std::size_t>> {
 protected:
  void TearDown() override {
    failpoint::disarm_all();
    if (!table_.empty()) db_.execute("DROP TABLE IF EXISTS " + table_);
  }

  Connection db_ = Connection::open(binberg::testing::mariadb_admin_options());
  std::string table_;
};

TEST_P(SnapshotKeyMatrixTest, CopyHoldsEachRowOfTheSnapshotOnceWhileAWriterChangesTheTable) {
  const auto& [key_case, chunk_rows] = GetParam();
  table_ = binberg::testing::unique_name("snapkey");
  const bool keyless = std::string(key_case.key).empty();
  db_.execute(fmt::format("CREATE TABLE {} ({}, v INT{}) DEFAULT CHARSET utf8mb4", table_, key_case.columns,
                          keyless ? "" : fmt::format(", PRIMARY KEY ({})", key_case.key)));
  std::string values;
  for (std::size_t i = 0; i < key_case.rows.size(); ++i)
    values += fmt::format("{}({}, {})", i ? ", " : "", key_case.rows[i], i);
  db_.execute(fmt::format("INSERT INTO {} VALUES {}", table_, values));
  const std::string database = binberg::testing::stack().mariadb().database;
  const auto schema = load_table_schema(db_, database, table_);
  std::map<std::string, std::string> described;
  const std::vector<std::string> expected = table_rows(db_, *schema, described);
  ASSERT_EQ(expected.size(), key_case.rows.size());

  // Between two chunks the writer changes every row, deletes the last one (by key: one the copy
  // has not read yet) and inserts a new one; none of it may reach the copy.
  Connection writer = Connection::open(binberg::testing::mariadb_admin_options());
  std::size_t writes = 0;
  failpoint::arm_call("source.snapshot.after_chunk", [&] {
    writer.execute(fmt::format("UPDATE {} SET v = v + 1000", table_));
    writer.execute(fmt::format("DELETE FROM {} ORDER BY {} DESC LIMIT 1", table_, keyless ? "v" : key_case.key));
    const std::string& insert = key_case.inserts[writes % key_case.inserts.size()];
    writer.execute(fmt::format("INSERT IGNORE INTO {} VALUES ({}, {})", table_, insert, 100 + writes));
    ++writes;
  });
  auto snapshot = TableSnapshot::open(binberg::testing::mariadb_replication_options(), database, table_, chunk_rows);
  EXPECT_EQ(snapshot.paged(0), key_case.read_by == ReadBy::kKeysetPaging);
  std::vector<std::string> copied;
  for (auto chunk = snapshot.next_chunk(); !chunk.empty(); chunk = snapshot.next_chunk()) {
    EXPECT_LE(chunk.size(), chunk_rows);
    for (const ChangeEvent& event : chunk) {
      copied.push_back(canonical_row(*schema, *event.after));
      described[copied.back()] = testing::describe(*schema, *event.after);
    }
    ASSERT_LE(copied.size(), 3 * expected.size())
        << "the copy does not end: it reads rows again, e.g. " << described[copied.back()];
  }
  failpoint::disarm_all();
  EXPECT_GT(writes, 0u) << "the writer never ran between two chunks";
  std::sort(copied.begin(), copied.end());
  EXPECT_EQ(copied.size(), expected.size()) << "rows copied / rows at the snapshot point";
  EXPECT_TRUE(copied == expected) << "missing from the copy:" << rows_not_in(expected, copied, described)
                                  << "\n  in the copy, not at the snapshot point (or more often):"
                                  << rows_not_in(copied, expected, described);
  EXPECT_EQ(snapshot.rows_read(), expected.size());
}

INSTANTIATE_TEST_SUITE_P(KeyTypes, SnapshotKeyMatrixTest,
                         ::testing::Combine(::testing::ValuesIn(key_cases()), ::testing::Values(1u, 2u, 7u)),
                         [](const auto& param_info) {
                           return fmt::format("{}InChunksOf{}", std::get<0>(param_info.param).name,
                                              std::get<1>(param_info.param));
                         });

TEST(SnapshotReaderTest, PositionMatchesGtidOfLastCommit) {
  Connection db = Connection::open(binberg::testing::mariadb_admin_options());
  const std::string table = binberg::testing::unique_name("snappos");
  db.execute(fmt::format("CREATE TABLE {} (id INT PRIMARY KEY)", table));
  db.execute(fmt::format("INSERT INTO {} VALUES (1)", table));
  const auto gtid = GtidPosition::parse(db.scalar("SELECT @@gtid_binlog_pos").value_or(""));
  const auto binlog = testing::master_position(db);
  auto snapshot = TableSnapshot::open(binberg::testing::mariadb_replication_options(),
                                      binberg::testing::stack().mariadb().database, table);
  EXPECT_EQ(snapshot.position().binlog, binlog);
  EXPECT_EQ(snapshot.position().gtid, gtid);
  auto rows = snapshot.next_chunk();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].event_id, fmt::format("snapshot:{}:{}:{}.{}#0", binlog.file, binlog.offset,
                                          binberg::testing::stack().mariadb().database, table));
  EXPECT_TRUE(snapshot.next_chunk().empty());
  db.execute("DROP TABLE " + table);
}

}  // namespace
}  // namespace binberg::mysql
