// Snapshot + stream while a writer keeps changing the table: replaying the stream from the
// snapshot position over the snapshot rows gives exactly the table's final state, with every
// update and delete finding the row image it expects (nothing missing, nothing seen twice).

#include "mysql/snapshot_reader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

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
    std::this_thread::sleep_for(2ms);  // let the writer race the snapshot
  }
  std::this_thread::sleep_for(100ms);
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
